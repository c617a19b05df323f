"""System prompt composition for one message."""

from __future__ import annotations

from datetime import datetime

from omega.prompts import Prompts

PLATFORM_HINTS = {
    "telegram": "You are talking on Telegram: Markdown is supported.",
    "whatsapp": "You are talking on WhatsApp: avoid Markdown tables and headers.",
    "terminal": "You are talking in a terminal: plain text, no Markdown tables.",
    "web": "You are talking on Omega's local web page: Markdown is supported.",
}


def compose_system_prompt(prompts: Prompts, channel: str, now: datetime | None = None) -> str:
    """Identity + soul + system, then the platform hint and the current time."""
    moment = (now or datetime.now().astimezone()).strftime("%A %Y-%m-%d %H:%M %Z")
    parts = [prompts.base_system_prompt]
    hint = PLATFORM_HINTS.get(channel)
    if hint:
        parts.append(hint)
    parts.append(f"Current time: {moment}.")
    return "\n\n".join(parts)
