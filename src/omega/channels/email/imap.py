"""A blocking IMAP session over imaplib (run in a worker thread by the channel): the few
commands the channel uses, and IDLE, which imaplib before Python 3.14 lacks."""

from __future__ import annotations

import contextlib
import imaplib
import io
import re
import select
import ssl
import threading
import time

from omega.channels.email.config import EmailConfig
from omega.errors import OmegaError

_NEWS = re.compile(rb"\* \d+ (EXISTS|RECENT)")  # an untagged line saying mail may have come


class MailboxError(OmegaError):
    """The IMAP server refused a command or the connection failed."""


class ImapSession:
    """One logged-in connection with the configured folder selected."""

    def __init__(self, config: EmailConfig) -> None:
        self.config = config
        host, port = config.imap_host, config.imap_port_or_default()
        timeout = config.timeout_secs
        try:
            if config.imap_security == "ssl":
                self.imap: imaplib.IMAP4 = imaplib.IMAP4_SSL(
                    host, port, ssl_context=ssl.create_default_context(), timeout=timeout
                )
            else:
                self.imap = imaplib.IMAP4(host, port, timeout=timeout)
                if config.imap_security == "starttls":
                    self.imap.starttls(ssl.create_default_context())
            self.imap.login(config.imap_user, config.imap_password.get_secret_value())
            kind, data = self.imap.select(_quote(config.folder))
        except (OSError, imaplib.IMAP4.error) as exc:
            raise MailboxError(f"IMAP {host}:{port}: {exc}") from None
        if kind != "OK":
            raise MailboxError(f"IMAP: cannot select {config.folder!r}: {data!r}")
        validity = self.imap.untagged_responses.get("UIDVALIDITY", [b"0"])
        last = validity[-1] if validity else b"0"
        self.uidvalidity = int(last) if isinstance(last, bytes | str) and last else 0
        self.can_idle = "IDLE" in self.imap.capabilities and config.idle
        self._broken = False  # an IDLE failed: the connection is in no known state

    def uids_after(self, last: int) -> list[int]:
        """The UIDs of the folder's mail newer than `last`, oldest first."""
        kind, data = self.imap.uid("SEARCH", f"UID {last + 1}:*")
        _ok(kind, data, "UID SEARCH")
        # "n:*" always matches the newest mail, even when its UID is below n.
        found = {int(x) for x in b" ".join(d for d in data if d).split()}
        return sorted(uid for uid in found if uid > last)

    def newest_uid(self) -> int:
        """The highest UID in the folder (0 when it is empty)."""
        kind, data = self.imap.uid("SEARCH", "ALL")
        _ok(kind, data, "UID SEARCH")
        return max((int(x) for x in b" ".join(d for d in data if d).split()), default=0)

    def fetch(self, uid: int, limit: int = 0) -> bytes | None:
        """The raw message, without marking it seen; None when it is gone. With `limit`, at
        most its first `limit` bytes (a partial FETCH: a huge mail is never downloaded)."""
        section = f"BODY.PEEK[]<0.{limit}>" if limit > 0 else "BODY.PEEK[]"
        kind, data = self.imap.uid("FETCH", str(uid), f"({section})")
        _ok(kind, data, "UID FETCH")
        for item in data:
            if isinstance(item, tuple) and re.search(rb"\bUID %d\b" % uid, item[0]):
                return bytes(item[1])
        for item in data:  # a server that leaves UID out of the answer
            if isinstance(item, tuple):
                return bytes(item[1])
        return None

    def mark_seen(self, uid: int) -> None:
        """Flag the message \\Seen (Omega has accepted it)."""
        kind, data = self.imap.uid("STORE", str(uid), "+FLAGS.SILENT", r"(\Seen)")
        _ok(kind, data, "UID STORE")

    def wait(self, seconds: float, stop: threading.Event) -> None:
        """Wait until new mail may have come: IDLE where offered (until the server speaks,
        `seconds` pass or `stop` is set), else sleep `seconds` and NOOP."""
        if not self.can_idle:
            stop.wait(seconds)
            if not stop.is_set():
                self.imap.noop()
            return
        try:
            self._idle(seconds, stop)
        except MailboxError:
            self._broken = True  # mid-IDLE: a LOGOUT would not be answered
            raise

    def _idle(self, seconds: float, stop: threading.Event) -> None:
        """IDLE until the server tells of mail, `seconds` pass or `stop` is set; then DONE."""
        tag = b"OMIDLE"
        self.imap.send(tag + b" IDLE\r\n")
        news = False  # mail the server tells of before its "+" (RFC 2177 allows it)
        answer_by = self._answer_by()
        while not (line := self.imap.readline()).startswith(b"+"):
            if not line:
                raise MailboxError("IMAP: the server closed the connection")
            if not line.startswith(b"* "):
                raise MailboxError(f"IMAP IDLE refused: {line!r}")
            news = news or bool(_NEWS.match(line))
            self._within(answer_by, "IDLE")
        sock = self.imap.socket()
        waited = 0.0
        while not news and waited < seconds and not stop.is_set():
            # Lines already read into imaplib's buffer (a server's "+" and its news in one
            # packet), or decrypted bytes TLS holds, no longer show on the socket.
            pending = self._buffered() or (isinstance(sock, ssl.SSLSocket) and sock.pending() > 0)
            ready, _, _ = ([sock], [], []) if pending else select.select([sock], [], [], 0.5)
            waited += 0.5
            if ready:
                line = self.imap.readline()
                if not line:
                    raise MailboxError("IMAP: the server closed the connection")
                if _NEWS.match(line):
                    break
        self.imap.send(b"DONE\r\n")
        answer_by = self._answer_by()
        while True:
            line = self.imap.readline()
            if not line:
                raise MailboxError("IMAP: the server closed the connection")
            if line.startswith(tag + b" "):
                if not line.startswith(tag + b" OK"):
                    raise MailboxError(f"IMAP IDLE ended badly: {line!r}")
                return
            self._within(answer_by, "DONE")

    def _answer_by(self) -> float:
        """When an answer to a command sent now is due: `timeout_secs` from now, however many
        untagged lines come first (each line alone is bounded by the socket's timeout)."""
        return time.monotonic() + self.config.timeout_secs

    def _within(self, answer_by: float, command: str) -> None:
        """Raise when the server talks past `answer_by` without answering `command`."""
        if time.monotonic() > answer_by:
            raise MailboxError(
                f"IMAP: no answer to {command} within {self.config.timeout_secs:g}s "
                "(the server kept sending other lines)"
            )

    def _buffered(self) -> bool:
        """Whether a line can be read without waiting: bytes in imaplib's buffer (looked at
        with the socket made non-blocking for the moment, so the look never waits)."""
        buffer = self.imap.file
        if not isinstance(buffer, io.BufferedReader):  # what imaplib reads through
            return False
        sock = self.imap.socket()
        timeout = sock.gettimeout()
        sock.settimeout(0.0)
        try:
            return bool(buffer.peek(1))
        except (BlockingIOError, ssl.SSLWantReadError):
            return False
        finally:
            sock.settimeout(timeout)

    def close(self) -> None:
        """Log out, ignoring a connection already gone; a session an IDLE left in an unknown
        state is just closed (its server may never answer the LOGOUT)."""
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            if self._broken:
                self.imap.shutdown()
            else:
                self.imap.logout()


def _ok(kind: str, data: object, what: str) -> None:
    if kind != "OK":
        raise MailboxError(f"IMAP {what} failed: {data!r}")


def _quote(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'
