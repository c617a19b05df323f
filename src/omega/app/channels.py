"""The message channels `omega start` runs, built from the config: JSON lines (--jsonl),
Telegram, WhatsApp and the web page. A channel that cannot run here is left out with a
warning on stderr; a web page that cannot listen stops the start (StartError).

A new channel is one more builder in `message_channels`."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from omega.app.runtime import Runtime
from omega.errors import OmegaError

if TYPE_CHECKING:
    from omega.channels.base import Channel
    from omega.memory import Store
    from omega.web.app import WebServer


class StartError(OmegaError):
    """The service cannot start here; the message is for the person at the terminal."""


def message_channels(
    runtime: Runtime, store: Store, *, jsonl: bool = False
) -> tuple[list[Channel], WebServer | None]:
    """Every enabled channel that can run here, in order, and the web page's server (whose
    channel is among them) when `[web] enabled`."""
    from omega.channels.terminal import JsonlChannel

    channels: list[Channel] = [JsonlChannel(downloads=runtime.paths.downloads)] if jsonl else []
    config = runtime.config.channel
    if config.telegram.enabled and (telegram := _telegram(runtime)) is not None:
        channels.append(telegram)
    if config.whatsapp.enabled and (whatsapp := _whatsapp(runtime)) is not None:
        channels.append(whatsapp)
    web = _web(runtime, store) if runtime.config.web.enabled else None
    if web is not None:
        channels.append(web.channel)
    if not channels:
        sys.stderr.write(
            "omega: note: no message channel is running; only the scheduler, "
            "heartbeat and summarizer work\n"
        )
    return channels, web


def _telegram(runtime: Runtime) -> Channel | None:
    """The Telegram channel, or None (with a warning) when it has no bot token."""
    telegram = runtime.config.channel.telegram
    if not telegram.bot_token.get_secret_value().strip():
        sys.stderr.write(
            "omega: warning: [channel.telegram] is enabled but has no bot_token (or "
            "TELEGRAM_BOT_TOKEN); the telegram channel is not started\n"
        )
        return None
    from omega.channels.telegram import TelegramChannel

    return TelegramChannel(telegram, health_file=runtime.paths.channel_health("telegram"))


def _whatsapp(runtime: Runtime) -> Channel | None:
    """The WhatsApp channel over neonize, or None (with a warning) when it cannot run here."""
    from omega.channels.whatsapp import WhatsAppChannel

    config = runtime.config.channel.whatsapp
    session = runtime.paths.whatsapp
    try:
        from omega.channels.whatsapp.neonize_client import NeonizeClient

        session.mkdir(parents=True, exist_ok=True)
        os.chmod(session, 0o700)
        client = NeonizeClient(session)
    except (ImportError, OSError) as exc:
        sys.stderr.write(
            "omega: warning: [channel.whatsapp] is enabled but its library cannot load "
            f"({exc}); install it with: pip install 'omega-agent[whatsapp]'. The whatsapp "
            "channel is not started\n"
        )
        return None
    if not config.allowed_users:
        sys.stderr.write(
            "omega: warning: [channel.whatsapp] allowed_users is empty: nobody is answered on "
            'WhatsApp (add your number, e.g. "+351900000000")\n'
        )
    return WhatsAppChannel(
        config, client, session, health_file=runtime.paths.channel_health("whatsapp")
    )


def _web(runtime: Runtime, store: Store) -> WebServer:
    """Bind the web page's socket and print its login link (also in $OMEGA_HOME/web.url)."""
    from omega.web.app import WebConfigError, is_loopback, prepare

    try:
        web = prepare(runtime, store)
    except WebConfigError as exc:
        raise StartError(str(exc)) from None
    if not is_loopback(runtime.config.web.host.strip() or "127.0.0.1"):
        sys.stderr.write(
            f"omega: warning: the web page listens on {runtime.config.web.host} "
            "([web] allow_remote = true): anyone who reaches it can try to log in\n"
        )
    # Written to the terminal only, never to the log: the token works once, and a fresh
    # link is always in web.url (readable by the owner alone).
    sys.stderr.write(
        f"omega: web page at {web.base_url} - log in with this one-time link:\n"
        f"  {web.login_link}\n  (a fresh link is always in {runtime.paths.web_url})\n"
    )
    return web
