"""The built-in channels as plug-ins, declared like any other (entry points in pyproject.toml):
JSON lines on stdin/stdout (`omega start --jsonl`), Telegram and WhatsApp. The web page's is
omega.app.channels.WEB (it is built with the runtime). Each library is imported by the factory,
so finding the plug-ins costs nothing."""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from omega.channels.base import TERMINAL_HINT, Channel
from omega.channels.plugin import (
    Capabilities,
    ChannelContext,
    ChannelPlugin,
    ChannelUnavailableError,
    locally_proven,
    platform_proven,
)
from omega.config.channels import TelegramConfig, TerminalConfig, WhatsAppConfig
from omega.ops.selfcheck import check_telegram, check_whatsapp

if TYPE_CHECKING:
    from omega.memory import Store


def _terminal(ctx: ChannelContext) -> Channel:
    from omega.channels.terminal import JsonlChannel

    return JsonlChannel(downloads=ctx.paths.downloads)


def _telegram(ctx: ChannelContext) -> Channel:
    """The Telegram channel; unavailable without a bot token."""
    assert isinstance(ctx.section, TelegramConfig)
    if not ctx.section.bot_token.get_secret_value().strip():
        raise ChannelUnavailableError(
            "[channel.telegram] is enabled but has no bot_token (or TELEGRAM_BOT_TOKEN); the "
            "telegram channel is not started"
        )
    from omega.channels.telegram import TelegramChannel

    refused = _audit_refused(ctx.store) if ctx.store is not None else None
    dropped = report_dropped(ctx.store) if ctx.store is not None else None
    return TelegramChannel(
        ctx.section, health_file=ctx.health_file, refused=refused, dropped=dropped
    )


def _audit_refused(store: Store) -> Callable[[str, str], Awaitable[None]]:
    """Audits a webhook request refused for its secret token: one entry a minute across the
    fleet at most (the log counts the rest), so a flood cannot fill the audit log."""
    from omega.memory.audit import AuditEntry
    from omega.memory.db import to_db_time

    async def refused(why: str, peer: str) -> None:
        entry = AuditEntry(
            channel="telegram",
            sender_id=peer[:200],
            status="denied",
            detail=f"webhook request refused: {why} secret token, from {peer[:200]}",
            event="telegram_webhook_refused",
        )
        since = to_db_time(dt.datetime.now(dt.UTC) - dt.timedelta(seconds=60))
        await store.call(store.audit_once, entry, since)

    return refused


def report_dropped(
    store: Store, channel: str = "telegram", thing: str = "update"
) -> Callable[[int | str, int, str], Awaitable[None]]:
    """Audits an update, message or event given up on, unread (Telegram, Discord, Slack,
    Matrix), and keeps an alert for the owner (delivered where they can reach it; status too)."""
    from omega.memory.audit import AuditEntry

    async def dropped(item_id: int | str, tries: int, error: str) -> None:
        entry = AuditEntry(
            channel=channel,
            sender_id="",
            status="error",
            detail=f"{thing} {item_id} dropped after {tries} failures: {error}",
            event=f"{channel}_{thing}_dropped",
        )
        await store.call(store.audit, entry)
        await store.call(
            store.keep_owner_alert,
            f"A {channel.capitalize()} {thing} ({item_id}) failed {tries} times and was dropped "
            f"so that later messages get through: {error}. See omega.log.",
        )

    return dropped


def _test_telegram(section: BaseModel) -> tuple[bool, str] | None:
    """`omega init`'s test of the bot token: Telegram's getMe (nothing to test without one)."""
    from omega.ops.setup import check_telegram_token

    assert isinstance(section, TelegramConfig)
    token = section.bot_token.get_secret_value().strip()
    if not token:
        return None
    ok, detail = check_telegram_token(section.api_url, token)
    return (True, f"Telegram bot: {detail}") if ok else (False, f"{detail}; check the token")


def _whatsapp(ctx: ChannelContext) -> Channel:
    """The WhatsApp channel over neonize; unavailable when the library cannot load."""
    from omega.channels.whatsapp import WhatsAppChannel

    assert isinstance(ctx.section, WhatsAppConfig)
    session = ctx.paths.whatsapp
    try:
        from omega.channels.whatsapp.neonize_client import NeonizeClient

        session.mkdir(parents=True, exist_ok=True)
        os.chmod(session, 0o700)
        client = NeonizeClient(session)
    except (ImportError, OSError) as exc:
        raise ChannelUnavailableError(
            f"[channel.whatsapp] is enabled but its library cannot load ({exc}); install it "
            "with: pip install 'omega-agent[whatsapp]'. The whatsapp channel is not started"
        ) from None
    if not ctx.section.allowed_users:
        sys.stderr.write(
            "omega: warning: [channel.whatsapp] allowed_users is empty: nobody is answered on "
            'WhatsApp (add your number, e.g. "+351900000000")\n'
        )
    return WhatsAppChannel(ctx.section, client, session, health_file=ctx.health_file)


TERMINAL = ChannelPlugin(
    name="terminal",
    config_model=TerminalConfig,
    factory=_terminal,
    capabilities=Capabilities(photos=True, max_message_length=1_000_000),
    enabled=lambda ctx: ctx.jsonl,  # `omega chat` builds the terminal itself
    description="JSON lines on stdin/stdout (omega start --jsonl)",
    sender_assurance=locally_proven,
    shared=True,  # each replica's own stdin
    prompt_hint=TERMINAL_HINT,
)
TELEGRAM = ChannelPlugin(
    name="telegram",
    config_model=TelegramConfig,
    factory=_telegram,
    capabilities=Capabilities(
        typing=True, photos=True, voice=True, groups=True, markdown="telegram-html"
    ),
    checks={"telegram": check_telegram},
    reports_health=True,
    description="Telegram Bot API, long polling or a webhook",
    sender_assurance=platform_proven,
    setup=_test_telegram,
    # sendMessage works from any replica; only getUpdates is one's (a webhook is every
    # replica's: the channel says `shared`, see omega.app.channels)
    sends_anywhere=True,
    prompt_hint="Platform: Telegram. Markdown is supported (bold, italic, code blocks).",
)
WHATSAPP = ChannelPlugin(
    name="whatsapp",
    config_model=WhatsAppConfig,
    factory=_whatsapp,
    capabilities=Capabilities(
        typing=True, photos=True, voice=True, groups=True, markdown="whatsapp"
    ),
    checks={"whatsapp": check_whatsapp},
    reports_health=True,
    description="WhatsApp Web multi-device (neonize)",
    sender_assurance=platform_proven,
    prompt_hint=("Platform: WhatsApp. Avoid Markdown tables and headers; use *bold* and bullets."),
)
