"""The e-mail channel: mail from the IMAP folder becomes IncomingMessages, OutgoingMessages
are sent by SMTP in the sender's thread.

Exactly once: a mail's id for Omega is `email:<UIDVALIDITY>:<UID>`, so the durable inbox
answers a re-delivered mail once; the last UID handed over is saved (state.py) only after
`submit` returned (the message is durable), and only then is the mail flagged \\Seen. A crash
in between hands the same mail over again after the restart, which the inbox drops or
answers once.

Who a mail is from is read strictly from its one From field and proven (or refuted) by the
receiving server's topmost Authentication-Results (identity.py, authres.py); the reply always
goes to that From, never to Reply-To. A mail is parsed off the event loop, after caps that
keep it linear (limits.py); one past a cap, without a readable sender or with a repeated
field a DKIM signature may cover (a Subject added above a replayed, signed one: mail.py) is
refused unread: never submitted, never answered, audited (at most once a `[limits]
denial_every_secs` per kind of refusal), and passed like any other (cursor saved, \\Seen).
A sender's thread is written to the state file only once the gateway admitted the mail
(state.py).

A proven mail is proof for Omega only when addressed to it, and only once (replay.py): one
whose To and Cc name none of Omega's addresses is refuted (a stranger's, audited by the
gateway); a proven one seen before (its sender's Message-ID remembered), without a
Message-ID, or without a Date within the window is refused unread as above."""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
import threading
import time
from email.message import EmailMessage
from typing import TYPE_CHECKING

from omega.channels.base import Submit
from omega.channels.email.config import EmailConfig
from omega.channels.email.imap import ImapSession, MailboxError
from omega.channels.email.limits import MAX_BYTES, Refusal
from omega.channels.email.mail import Received, Thread, build_mail, parse_mail
from omega.channels.email.replay import for_omega
from omega.channels.email.state import MailState
from omega.channels.health import HealthReporter
from omega.errors import OmegaError
from omega.memory.audit import AuditEntry
from omega.types import IncomingMessage, OutgoingMessage

if TYPE_CHECKING:
    from omega.memory.store import Store

log = logging.getLogger(__name__)

RETRY_SECS = (1.0, 5.0, 30.0, 120.0)  # waits after a failed connection, the last repeated


class SendMailError(OmegaError):
    """The SMTP server refused the mail or could not be reached."""


class NotStoredError(OmegaError):
    """`submit` failed (the store away): tried again after a pause, as a lost connection."""


class EmailChannel:
    """IMAP in (IDLE or polling), SMTP out."""

    name = "email"

    def __init__(
        self,
        config: EmailConfig,
        state: MailState,
        health: HealthReporter,
        store: Store | None = None,
        denial_every_secs: float = 86_400,
    ) -> None:
        """`store`: where refusals are audited and admission is read (the durable inbox holds
        a mail once the gateway admitted it); without one, refusals are only logged and no
        sender's thread is written down."""
        self.config = config
        self.state = state
        self.health = health
        self.store = store
        self.denial_every_secs = denial_every_secs
        self._stop = threading.Event()
        self._lock = asyncio.Lock()  # the state is saved by `run` and `send`
        self._own = config.own_addresses()  # a proven mail must name one in To or Cc

    async def run(self, submit: Submit) -> None:
        """Hand every new mail to Omega until `stop`; reconnect after failures."""
        # Built at start, run when this replica took the channel over: resume at the cursor
        # the last leader left in the store, not at the one read when this one was built.
        await asyncio.to_thread(self.state.refresh)
        failures = 0
        while not self._stop.is_set():
            try:
                session = await asyncio.to_thread(ImapSession, self.config)
            except MailboxError as exc:
                await self._failed(exc, failures)
                failures += 1
                continue
            try:
                self.health.report("running")
                failures = 0
                await self._serve(session, submit)
            # imaplib.abort is an OSError; a mail not stored is neither seen nor passed.
            except (MailboxError, OSError, EOFError, NotStoredError) as exc:
                await self._failed(exc, failures)
                failures += 1
            finally:
                await asyncio.to_thread(session.close)
        self.health.report("stopped")

    async def _failed(self, exc: BaseException, failures: int) -> None:
        detail = str(exc)[:300]
        log.warning("email channel: %s", detail)
        self.health.report("failed", detail)
        await asyncio.to_thread(self._stop.wait, RETRY_SECS[min(failures, len(RETRY_SECS) - 1)])

    async def _serve(self, session: ImapSession, submit: Submit) -> None:
        if session.uidvalidity != self.state.uidvalidity or self.state.last_uid < 0:
            # A new mailbox (or one renumbered): start at its newest mail, answering only what
            # comes from now on, never the whole folder's history.
            self.state.uidvalidity = session.uidvalidity
            self.state.last_uid = await asyncio.to_thread(session.newest_uid)
            async with self._lock:
                await asyncio.to_thread(self.state.save)
        while not self._stop.is_set():
            self.health.report("running")
            for uid in await asyncio.to_thread(session.uids_after, self.state.last_uid):
                if self._stop.is_set():
                    return
                await self._take(session, uid, submit)
            await asyncio.to_thread(session.wait, self.config.poll_secs, self._stop)

    async def _take(self, session: ImapSession, uid: int, submit: Submit) -> None:
        ident = f"email:{session.uidvalidity}:{uid}"
        raw = await asyncio.to_thread(session.fetch, uid, MAX_BYTES + 1)
        mail = None
        if raw is not None:
            mail = await asyncio.to_thread(parse_mail, raw, self.config.authserv_id)
        own = self.config.sender().strip().lower()
        if mail is None:
            log.info("email channel: mail %s is gone", uid)
        elif mail.refusal is not None:
            await self._refuse(ident, mail.refusal)
        elif mail.auto or mail.address == own:
            log.info("email channel: mail %s is automatic or Omega's own", uid)
        else:
            await self._proven_once(ident, mail, submit)
        async with self._lock:
            self.state.last_uid = max(self.state.last_uid, uid)
            await asyncio.to_thread(self.state.save)
        await asyncio.to_thread(session.mark_seen, uid)

    async def _proven_once(self, ident: str, mail: Received, submit: Submit) -> None:
        """Hand over a readable mail: a proven one not addressed to Omega as a stranger's,
        none that may be a replay of a proven one."""
        checked = for_omega(mail, self._own)
        if checked is not mail:
            log.warning("email channel: mail %s is not addressed to Omega: a stranger's", ident)
        mail = checked
        refusal = self.state.seen.refusal(mail, ident, time.time())
        if refusal is not None:
            await self._refuse(ident, refusal)
        else:
            await self._hand_over(ident, mail, submit)

    async def _hand_over(self, ident: str, mail: Received, submit: Submit) -> None:
        """Submit one readable mail; write its thread down once the gateway admitted it."""
        proven = mail.sent if mail.assurance == "mail_server" else None
        thread = Thread(mail.message_id, tuple(mail.references), mail.subject)
        self.state.remember(ident, mail.address, thread, proven)
        text = mail.text
        if mail.subject and not mail.references:  # a new conversation: its subject too
            text = f"{mail.subject}\n\n{text}".strip()
        message = IncomingMessage(
            channel=self.name,
            sender_id=mail.address,  # the From, read strictly; replies go there, never Reply-To
            text=text,
            sender_name=mail.name,
            attachments=mail.attachments,
            id=ident,
            # One conversation per mail thread: its first mail's Message-ID names it.
            thread=mail.references[0] if mail.references else mail.message_id,
            assurance=mail.assurance,
            assurance_detail=mail.assurance_detail,
        )
        try:
            await submit(message)  # returns once the message is durable in the inbox
        except Exception as exc:  # the store away: the mail stays unseen and is read again
            raise NotStoredError(f"mail {ident} not stored yet: {exc!r}"[:300]) from exc
        if await self._admitted(ident):
            async with self._lock:
                self.state.admit(ident)  # saved with the cursor

    async def _admitted(self, ident: str) -> bool:
        """Whether the gateway admitted the mail: the durable inbox holds it (it keeps nothing
        of a refused sender's message)."""
        if self.store is None:
            return False
        try:
            return await self.store.call(self.store.inbox_has, ident)
        except Exception:
            log.exception("email channel: could not read whether %s was admitted", ident)
            return False

    async def _refuse(self, ident: str, refusal: Refusal) -> None:
        """Audit a mail refused unread (nothing of it is quoted), at most once a
        `denial_every_secs` per kind of refusal, with the count dropped since."""
        log.warning("email channel: refused mail %s unread: %s", ident, refusal.detail)
        store = self.store
        if store is None:
            return
        try:
            due, dropped = await store.call(
                store.denial_due,
                self.name,
                f"(refused mail: {refusal.code})",
                self.denial_every_secs,
            )
            if not due:
                return
            detail = f"mail {ident} refused unread: {refusal.detail}"
            if dropped:
                detail += f"; {dropped} more such mail(s) refused since the last report"
            entry = AuditEntry(
                channel=self.name,
                sender_id="",
                status="denied",
                event="denied",
                detail=detail,
            )
            await store.call(store.audit, entry)
        except Exception:
            log.exception("email channel: could not audit the refusal of %s", ident)

    async def send(self, message: OutgoingMessage) -> None:
        """Mail one outgoing message to its target, in the thread it answers."""
        thread = self.state.thread(message.reply_to, message.target)
        mail = build_mail(
            self.config.sender(),
            message.target,
            message.text,
            thread,
            stable_id=message.id,
            default_subject=self.config.subject,
            photo=message.photo,
        )
        await asyncio.to_thread(self._deliver, mail)

    def _deliver(self, mail: EmailMessage) -> None:
        config = self.config
        host, port = config.smtp_host, config.smtp_port_or_default()
        user = config.smtp_user or config.imap_user
        password = config.smtp_password.get_secret_value()
        try:
            if config.smtp_security == "ssl":
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                    host, port, timeout=config.timeout_secs, context=ssl.create_default_context()
                )
            else:
                smtp = smtplib.SMTP(host, port, timeout=config.timeout_secs)
            with smtp:
                if config.smtp_security == "starttls":
                    smtp.starttls(context=ssl.create_default_context())
                if password:
                    smtp.login(user, password)
                smtp.send_message(mail)
        except (OSError, smtplib.SMTPException) as exc:
            raise SendMailError(f"SMTP {host}:{port}: {exc}") from None

    async def send_typing(self, target: str) -> None:
        """Mail has no typing indicator."""

    async def stop(self) -> None:
        """End `run` (an IDLE or a poll wait ends within a second)."""
        self._stop.set()
