"""The e-mail channel plug-in: IMAP in (IDLE, else polling), SMTP out, one conversation per
mail thread. Declared as the `email` entry point of the `omega.channels` group; it uses the
standard library only (imaplib, smtplib, email)."""

from __future__ import annotations

from pydantic import BaseModel

from omega.channels.base import Channel
from omega.channels.email.checks import check_email, missing_settings
from omega.channels.email.config import EmailConfig
from omega.channels.plugin import (
    Capabilities,
    ChannelContext,
    ChannelPlugin,
    ChannelUnavailableError,
)
from omega.types import Assurance

__all__ = ["PLUGIN", "EmailConfig"]


def _build(ctx: ChannelContext) -> Channel:
    """The running channel; unavailable while settings are missing."""
    from omega.channels.email.channel import EmailChannel
    from omega.channels.email.state import MailState

    assert isinstance(ctx.section, EmailConfig)
    missing = missing_settings(ctx.section)
    if missing:
        raise ChannelUnavailableError(f"[channel.email] needs {', '.join(missing)}")
    state = MailState.load(ctx.paths.home / "email.state.json", ctx.state())
    health = ctx.health(lambda: ctx.section.sender())  # type: ignore[attr-defined]
    every = ctx.config.limits.denial_every_secs
    return EmailChannel(ctx.section, state, health, ctx.store, denial_every_secs=every)


def _proof(section: BaseModel) -> Assurance:
    """Proven by the receiving mail server once its authserv-id is configured, else not."""
    return "mail_server" if getattr(section, "authserv_id", "") else "unverified"


def _test_login(section: BaseModel) -> tuple[bool, str] | None:
    """`omega init`'s test of the answers: the settings complete, and an IMAP login."""
    from omega.channels.email.imap import ImapSession, MailboxError

    assert isinstance(section, EmailConfig)
    missing = missing_settings(section)
    if missing:
        return False, f"[channel.email] needs {', '.join(missing)}"
    try:
        ImapSession(section).close()
    except MailboxError as exc:
        return False, str(exc)
    return True, f"logged in to {section.imap_user}'s {section.folder}"


PLUGIN = ChannelPlugin(
    name="email",
    config_model=EmailConfig,
    factory=_build,
    capabilities=Capabilities(photos=True, max_message_length=1_000_000, markdown="plain"),
    checks={"email": check_email},
    reports_health=True,
    description="e-mail: IMAP in (IDLE or polling), SMTP out",
    setup=_test_login,
    sender_assurance=_proof,
    prompt_hint=(
        "Platform: e-mail. Plain text only, no Markdown; the reply is sent as a mail in the "
        "person's thread, so no subject line and no signature."
    ),
)
