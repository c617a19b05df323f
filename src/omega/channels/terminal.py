"""The terminal channel: an interactive chat, or JSON lines on stdin/stdout for scripts."""

from __future__ import annotations

import asyncio
import base64
import binascii
import getpass
import io
import json
import logging
import os
import re
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import IO, Any, Literal

from omega.channels.base import Submit
from omega.channels.jsonl_ids import given_id, id_field
from omega.text import one_line, scrub
from omega.types import Attachment, IncomingMessage, OutgoingMessage

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


_ID_PREFIX = "jsonl:"  # ids chosen by a script, namespaced apart from other channels'
_ATTACHMENT_KINDS = ("image", "document", "audio", "video")


def _attachments(value: object) -> list[Attachment]:
    """The `attachments` field: a list of {kind, data (base64), name?, mime_type?}."""
    if not isinstance(value, list):
        raise ValueError("field 'attachments' must be a list")
    found = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ValueError(f"attachment {index} must be an object")
        kind = item.get("kind", "document")
        if kind not in _ATTACHMENT_KINDS:
            raise ValueError(f"attachment {index}: 'kind' must be one of {_ATTACHMENT_KINDS}")
        name, mime_type, data = item.get("name", ""), item.get("mime_type", ""), item.get("data")
        if not isinstance(name, str) or not isinstance(mime_type, str):
            raise ValueError(f"attachment {index}: 'name' and 'mime_type' must be strings")
        if not isinstance(data, str):
            raise ValueError(f"attachment {index}: 'data' (base64) is required")
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"attachment {index}: 'data' is not valid base64") from None
        found.append(Attachment(kind=kind, data=raw, name=scrub(name), mime_type=scrub(mime_type)))
    return found


def parse_jsonl_line(line: str, default_sender: str) -> IncomingMessage:
    """Parse one input line `{"text": ..., "sender_id"?, "sender_name"?, "is_group"?, "id"?,
    "attachments"?}`; text fields come back free of lone surrogates.

    Raises ValueError with a message fit for the caller when the line is not acceptable
    (never anything else: too deep a nesting is a ValueError too)."""
    try:
        data: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError("not acceptable JSON (nested too deeply)") from None
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
    message = IncomingMessage(
        channel="terminal",
        sender_id=scrub(sender_id.strip()),
        sender_name=scrub(sender_name),
        text=scrub(text),
        is_group=is_group,
        attachments=_attachments(data.get("attachments", [])),
        assurance="local",  # whoever types at this machine's terminal
    )
    if data.get("id") is not None:
        # Namespaced, so ids chosen by a script never meet another channel's.
        message.id = f"{_ID_PREFIX}{id_field(data['id'])}"
    return message


def public_id(internal: str) -> str:
    """An id as the script knows it: its own `id` without the channel's namespace."""
    return internal.replace(_ID_PREFIX, "", 1) if internal.startswith(_ID_PREFIX) else internal


def _text_stdin() -> IO[str]:
    """stdin as UTF-8 text where undecodable bytes become U+FFFD instead of ending input."""
    stream = sys.stdin
    if isinstance(stream, io.TextIOWrapper):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace")
        except (ValueError, OSError) as exc:  # already read from, or not reconfigurable
            log.debug("stdin kept as it is: %s", exc)
    return stream


class JsonlChannel:
    """Scriptable terminal: one JSON object per line in, one per outgoing message out."""

    def __init__(
        self,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        default_sender: str | None = None,
        downloads: Path | None = None,
    ) -> None:
        self._stdin = stdin or _text_stdin()
        self._stdout = stdout or sys.stdout
        self._default_sender = default_sender or getpass.getuser()
        self._downloads = downloads
        self._stopped = asyncio.Event()

    @property
    def name(self) -> str:
        return "terminal"

    def _write(self, obj: dict[str, object]) -> None:
        # scrub: a lone surrogate (from a model's JSON, say) would make the write raise.
        self._stdout.write(one_line(scrub(json.dumps(obj, ensure_ascii=False))) + "\n")
        self._stdout.flush()

    def _reject(self, line_no: int, reason: str, line: str = "") -> None:
        log.warning("jsonl input line %d rejected: %s", line_no, reason)
        # Its id, stable on a re-send (docs/channels/terminal.md).
        turn = given_id(line) or f"line:{line_no}"
        text = f"input line {line_no} ignored: {reason}"
        error = {"id": f"{turn}#error", "reply_to": turn, "to": None, "text": text}
        self._write({**error, "kind": "error"})

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
            # One bad line never ends the input: it gets an error object, the next is read.
            try:
                message = parse_jsonl_line(line, self._default_sender)
            except ValueError as exc:
                self._reject(line_no, str(exc), line)
                continue
            except Exception as exc:  # a parser bug is still only this line's problem
                log.exception("jsonl input line %d could not be parsed", line_no)
                self._reject(line_no, f"could not be read ({type(exc).__name__})", line)
                continue
            try:
                await submit(message)
            except Exception as exc:
                log.exception("jsonl input line %d could not be taken", line_no)
                self._reject(line_no, f"could not be taken ({type(exc).__name__})", line)

    async def send(self, message: OutgoingMessage) -> None:
        out: dict[str, object] = {
            "id": public_id(message.id) or f"out:{uuid.uuid4().hex}",
            "reply_to": public_id(message.reply_to) or None,
            "to": message.target,
            "text": message.text,
            "kind": message.kind,
        }
        if message.photo is not None and self._downloads is not None:
            out["path"] = str(save_photo(self._downloads, message))
        self._write(out)

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self._stopped.set()


class InteractiveChannel:
    """A human at the terminal: prompt, wait until Omega has handled the message, repeat.

    Input is read all the time, so `/quit` and Ctrl-D work even while an answer is pending
    (it stays in the durable inbox and is answered at the next start); lines typed meanwhile
    are sent, in order, once the current message is handled. Images arrive as files under
    `downloads`, and their paths are printed.
    """

    def __init__(
        self,
        assistant_name: str = "Omega",
        sender_id: str | None = None,
        downloads: Path | None = None,
    ) -> None:
        self._name = assistant_name
        self._sender = sender_id or getpass.getuser()
        self._downloads = downloads
        self._stopped = asyncio.Event()

    @property
    def name(self) -> str:
        return "terminal"

    async def run(self, submit: Submit) -> None:
        interactive = sys.stdin.isatty()
        if interactive:
            sys.stderr.write(f"Chatting with {self._name}. Type /quit or press Ctrl-D to leave.\n")
        lines: asyncio.Queue[object] = asyncio.Queue()
        _start_line_reader(_text_stdin(), asyncio.get_running_loop(), lines)
        held: list[str] = []  # typed while an answer was pending
        ended = False  # piped input ran out: answer what was read, then leave
        while not self._stopped.is_set():
            if held:
                text = held.pop(0)
            elif ended:
                break
            else:
                if interactive:
                    sys.stderr.write("you> ")
                    sys.stderr.flush()
                line = await self._next(lines)
                if line is None:
                    break
                text = line
            if text in ("/quit", "/exit"):
                break
            handled = await submit(
                IncomingMessage(
                    channel="terminal", sender_id=self._sender, text=text, assurance="local"
                )
            )
            outcome = await self._wait_handled(handled, lines, held, interactive)
            if outcome == "leave":
                sys.stderr.write(
                    f"({self._name} is still working on that; the answer comes when you next "
                    "start a chat.)\n"
                )
                break
            ended = ended or outcome == "ended"

    async def _next(self, lines: asyncio.Queue[object]) -> str | None:
        """The next non-empty input line; None at end of input or on stop."""
        while True:
            item = await self._read(lines)
            if item is None or item.strip():
                return None if item is None else item.strip()

    async def _read(
        self, lines: asyncio.Queue[object], handled: asyncio.Future[None] | None = None
    ) -> str | None:
        """One input line ('' when `handled` finished first); None at end of input or stop."""
        getter = asyncio.ensure_future(lines.get())
        stopper = asyncio.ensure_future(self._stopped.wait())
        waiting: set[asyncio.Future[Any]] = {getter, stopper}
        if handled is not None:
            waiting.add(handled)
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            if not getter.done():
                getter.cancel()  # a cancelled Queue.get() loses no line
        if getter.done() and not getter.cancelled():
            item = getter.result()
            return None if item is _EOF else str(item)
        return None if self._stopped.is_set() else ""

    async def _wait_handled(
        self,
        handled: asyncio.Future[None],
        lines: asyncio.Queue[object],
        held: list[str],
        interactive: bool,
    ) -> Literal["handled", "ended", "leave"]:
        """Wait for the message to be handled while still reading input.

        At a terminal, /quit or Ctrl-D leaves at once ("leave"). Piped input is a script: its
        lines (/quit too) wait their turn, and its end means "answer, then leave" ("ended")."""
        ended = False
        while not handled.done():
            line = await self._read(lines, handled)
            if self._stopped.is_set():
                return "leave"
            if line is None:
                if interactive:
                    return "leave"
                ended = True
                continue
            if interactive and line.strip() in ("/quit", "/exit"):
                return "leave"
            if line.strip():
                held.append(line.strip())
        return "ended" if ended else "handled"

    async def send(self, message: OutgoingMessage) -> None:
        text = message.text
        if message.photo is not None:
            text = f"[image] {self._save(message)}"
        sys.stdout.write(scrub(f"{self._name.lower()}> {text}\n"))
        sys.stdout.flush()

    def _save(self, message: OutgoingMessage) -> str:
        """Keep a received image where the person can open it; return its path."""
        return str(save_photo(self._downloads, message)) if self._downloads else message.text

    async def send_typing(self, target: str) -> None:
        return None

    async def stop(self) -> None:
        self._stopped.set()


def save_photo(folder: Path, message: OutgoingMessage) -> Path:
    """Write an outgoing image to `folder` under a fresh, safe name (0600); return its path."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    stem = re.sub(r"[^\w.-]", "_", Path(message.text).name)[:80] or "image.png"
    path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}-{stem}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(message.photo or b"")
    return path
