"""The terminal channel: an interactive chat, or JSON lines on stdin/stdout for scripts."""

from __future__ import annotations

import asyncio
import getpass
import json
import logging
import sys
import threading
from typing import IO, Any

from omega.channels.base import Submit
from omega.types import IncomingMessage, OutgoingMessage

log = logging.getLogger(__name__)

_EOF = object()


def _start_line_reader(
    stream: IO[str], loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[object]
) -> threading.Thread:
    """Read lines on a daemon thread (so a blocked read never holds up exit)."""

    def pump() -> None:
        try:
            while True:
                line = stream.readline()
                if not line:
                    break
                loop.call_soon_threadsafe(queue.put_nowait, line)
        except (OSError, ValueError) as exc:  # closed or undecodable stream
            log.warning("terminal input stopped: %s", exc)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, _EOF)

    thread = threading.Thread(target=pump, name="omega-stdin", daemon=True)
    thread.start()
    return thread


async def _read_line(stream: IO[str], prompt: str) -> str | None:
    """Read one line on a daemon thread; None at end of input."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            if prompt:
                sys.stderr.write(prompt)
                sys.stderr.flush()
            line: str | None = stream.readline() or None
        except (OSError, ValueError):
            line = None

        def deliver() -> None:
            if not future.done():
                future.set_result(line)

        loop.call_soon_threadsafe(deliver)

    threading.Thread(target=read, name="omega-stdin", daemon=True).start()
    return await future


def parse_jsonl_line(line: str, default_sender: str) -> IncomingMessage:
    """Parse one input line `{"text": ..., "sender_id"?, "sender_name"?, "is_group"?}`.

    Raises ValueError with a message fit for the caller when the line is not acceptable.
    """
    try:
        data: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    text = data.get("text")
    if not isinstance(text, str):
        raise ValueError("field 'text' is required and must be a string")
    sender_id = data.get("sender_id", default_sender)
    if isinstance(sender_id, int) and not isinstance(sender_id, bool):
        sender_id = str(sender_id)
    if not isinstance(sender_id, str) or not sender_id.strip():
        raise ValueError("field 'sender_id' must be a non-empty string")
    sender_name = data.get("sender_name", "")
    if not isinstance(sender_name, str):
        raise ValueError("field 'sender_name' must be a string")
    is_group = data.get("is_group", False)
    if not isinstance(is_group, bool):
        raise ValueError("field 'is_group' must be true or false")
    return IncomingMessage(
        channel="terminal",
        sender_id=sender_id.strip(),
        sender_name=sender_name,
        text=text,
        is_group=is_group,
    )


class JsonlChannel:
    """Scriptable terminal: one JSON object per line in, one per outgoing message out."""

    def __init__(
        self,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        default_sender: str | None = None,
    ) -> None:
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._default_sender = default_sender or getpass.getuser()
        self._stopped = asyncio.Event()

    @property
    def name(self) -> str:
        return "terminal"

    def _write(self, obj: dict[str, object]) -> None:
        self._stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self._stdout.flush()

    async def run(self, submit: Submit) -> None:
        queue: asyncio.Queue[object] = asyncio.Queue()
        _start_line_reader(self._stdin, asyncio.get_running_loop(), queue)
        line_no = 0
        while not self._stopped.is_set():
            getter = asyncio.ensure_future(queue.get())
            stopper = asyncio.ensure_future(self._stopped.wait())
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            for fut in (getter, stopper):
                if fut not in done:
                    fut.cancel()
            if getter not in done:
                break
            item = getter.result()
            if item is _EOF:
                break
            line_no += 1
            line = str(item).strip()
            if not line:
                continue
            try:
                message = parse_jsonl_line(line, self._default_sender)
            except ValueError as exc:
                log.warning("jsonl input line %d rejected: %s", line_no, exc)
                self._write(
                    {"to": None, "kind": "error", "text": f"input line {line_no} ignored: {exc}"}
                )
                continue
            await submit(message)

    async def send(self, message: OutgoingMessage) -> None:
        self._write({"to": message.target, "text": message.text, "kind": message.kind})

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self._stopped.set()


class InteractiveChannel:
    """A human at the terminal: prompt, wait for Omega's answer, repeat; `/quit` or Ctrl-D ends."""

    def __init__(self, assistant_name: str = "Omega", sender_id: str | None = None) -> None:
        self._name = assistant_name
        self._sender = sender_id or getpass.getuser()
        self._answered = asyncio.Event()
        self._stopped = asyncio.Event()

    @property
    def name(self) -> str:
        return "terminal"

    async def run(self, submit: Submit) -> None:
        interactive = sys.stdin.isatty()
        if interactive:
            sys.stderr.write(f"Chatting with {self._name}. Type /quit or press Ctrl-D to leave.\n")
        while not self._stopped.is_set():
            line = await _read_line(sys.stdin, "you> " if interactive else "")
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit"):
                break
            self._answered.clear()
            await submit(IncomingMessage(channel="terminal", sender_id=self._sender, text=text))
            await self._answered.wait()

    async def send(self, message: OutgoingMessage) -> None:
        sys.stdout.write(f"{self._name.lower()}> {message.text}\n")
        sys.stdout.flush()
        if message.kind not in ("ack", "status"):
            self._answered.set()

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self._stopped.set()
        self._answered.set()
