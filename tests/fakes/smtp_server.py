"""A real SMTP server on loopback (aiosmtpd) that keeps every mail it is given."""

from __future__ import annotations

import socket
import threading
import time
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from types import TracebackType

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session


class _Keep:
    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        mail = BytesParser(policy=policy.default).parsebytes(content)
        with self.sink.lock:
            self.sink.mail.append((list(envelope.rcpt_tos), mail))  # type: ignore[arg-type]
        return "250 OK"


class SmtpSink:
    """`with SmtpSink() as smtp:` accepts mail on 127.0.0.1:`smtp.port` (no TLS, no auth)."""

    def __init__(self) -> None:
        self.mail: list[tuple[list[str], EmailMessage]] = []
        self.lock = threading.Lock()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._controller = Controller(_Keep(self), hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> SmtpSink:
        self._controller.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._controller.stop()

    def wait(self, count: int, timeout: float = 20) -> list[EmailMessage]:
        """The first `count` mails, once they came."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.mail) >= count:
                    return [mail for _, mail in self.mail]
            time.sleep(0.05)
        raise AssertionError(f"fewer than {count} mails: {[str(m) for _, m in self.mail]}")
