"""The Telegram channel (Bot API long polling, through python-telegram-bot)."""

from omega.channels.telegram.channel import TelegramChannel

__all__ = ["TelegramChannel"]
