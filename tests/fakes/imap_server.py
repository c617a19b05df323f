"""A wire double of an IMAP4rev1 server: the subset Omega's e-mail channel uses (CAPABILITY,
LOGIN, SELECT, UID SEARCH, UID FETCH (partial ones too), UID STORE, IDLE, NOOP, LOGOUT),
spoken on a loopback socket so `imaplib` talks to it unchanged. One folder; mail is put in
with `deliver`.

Runs its asyncio loop in a thread of its own, so a test can kill and restart Omega (a
subprocess) while the mailbox lives on."""

from __future__ import annotations

import asyncio
import re
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType


@dataclass
class StoredMail:
    """One message in the folder."""

    uid: int
    raw: bytes
    flags: set[str] = field(default_factory=set)


class FakeImap:
    """`with FakeImap(user, password) as imap:` serves on 127.0.0.1:`imap.port`."""

    def __init__(
        self, user: str = "omega@example.org", password: str = "pw", *, idle: bool = True
    ) -> None:
        self.user, self.password, self.idle = user, password, idle
        self.uidvalidity = 1700000001
        self.mail: list[StoredMail] = []
        self.commands: list[str] = []  # every command line received (LOGIN's password hidden)
        # Run on the server's loop after each UID SEARCH is answered (mail that lands between
        # a client's search and its IDLE); news_before_idling: mail the session was not told of
        # is told before "+ idling" rather than after (servers differ; RFC 2177 allows both).
        self.after_search: Callable[[str], None] | None = None  # given the search's criteria
        self.news_before_idling = False
        # A hostile or broken server: untagged lines, every 10 ms, and never IDLE's "+".
        self.chatter_instead_of_idling = False
        self.logins = 0
        self._idlers: set[asyncio.Queue[int]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self.port = 0

    def __enter__(self) -> FakeImap:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(timeout=10)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        """Stop serving and end every client's session (one killed mid-IDLE included), so the
        loop stops with nothing pending."""
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        current = asyncio.current_task()
        clients = [task for task in asyncio.all_tasks() if task is not current]
        for task in clients:
            task.cancel()
        await asyncio.gather(*clients, return_exceptions=True)

    def deliver(self, raw: bytes) -> int:
        """Put a message into the folder (unseen); its UID. IDLE clients are told."""

        async def put() -> int:
            return self.add_now(raw)

        return asyncio.run_coroutine_threadsafe(put(), self._loop).result(timeout=10)

    def add_now(self, raw: bytes) -> int:
        """`deliver`, called on the server's own loop (from `after_search`)."""
        uid = (self.mail[-1].uid if self.mail else 0) + 1
        self.mail.append(StoredMail(uid, raw))
        for queue in self._idlers:
            queue.put_nowait(len(self.mail))
        return uid

    def drop(self) -> None:
        """Cut every connection, as a server restart or a network failure does."""

        async def cut() -> None:
            for writer in list(self._writers):
                writer.transport.abort()

        asyncio.run_coroutine_threadsafe(cut(), self._loop).result(timeout=10)

    def seen(self) -> list[int]:
        """The UIDs flagged \\Seen."""
        return [m.uid for m in list(self.mail) if "\\Seen" in m.flags]

    def capabilities(self) -> str:
        """The CAPABILITY line's list."""
        return "IMAP4rev1 IDLE" if self.idle else "IMAP4rev1"

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def say(line: str | bytes) -> None:
            writer.write((line.encode() if isinstance(line, str) else line) + b"\r\n")

        self._writers.add(writer)
        say(f"* OK [CAPABILITY {self.capabilities()}] fake IMAP ready")
        logged_in = False
        # How many messages this session has been told of: as a real server does (RFC 3501
        # 7.3.1), mail that came since is told at the next chance (NOOP, IDLE's start).
        told = [0]

        def news() -> str:
            """The EXISTS line of mail this session was not told of yet ("" if none)."""
            if len(self.mail) == told[0]:
                return ""
            told[0] = len(self.mail)
            return f"* {told[0]} EXISTS"

        def tell_news() -> None:
            if line := news():
                say(line)

        try:
            while line := await reader.readline():
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                tag, _, rest = text.partition(" ")
                command, _, args = rest.partition(" ")
                command = command.upper()
                shown = "LOGIN ***" if command == "LOGIN" else rest
                self.commands.append(shown)
                if command == "UID":
                    sub, _, args = args.partition(" ")
                    command = "UID " + sub.upper()
                if command == "CAPABILITY":
                    say(f"* CAPABILITY {self.capabilities()}")
                    say(f"{tag} OK CAPABILITY completed")
                elif command == "LOGIN":
                    user, password = shlex.split(args)
                    if (user, password) != (self.user, self.password):
                        say(f"{tag} NO [AUTHENTICATIONFAILED] invalid credentials")
                    else:
                        logged_in = True
                        self.logins += 1
                        say(f"{tag} OK LOGIN completed")
                elif command == "LOGOUT":
                    say("* BYE logging out")
                    say(f"{tag} OK LOGOUT completed")
                    break
                elif command == "NOOP":
                    if logged_in:
                        tell_news()
                    say(f"{tag} OK NOOP completed")
                elif not logged_in:
                    say(f"{tag} BAD log in first")
                elif command == "SELECT":
                    nxt = (self.mail[-1].uid if self.mail else 0) + 1
                    told[0] = len(self.mail)
                    say(f"* {len(self.mail)} EXISTS")
                    say("* 0 RECENT")
                    say("* FLAGS (\\Seen \\Answered \\Flagged \\Deleted \\Draft)")
                    say(f"* OK [UIDVALIDITY {self.uidvalidity}] UIDs valid")
                    say(f"* OK [UIDNEXT {nxt}] predicted next UID")
                    say(f"{tag} OK [READ-WRITE] SELECT completed")
                elif command == "UID SEARCH":
                    say("* SEARCH " + " ".join(str(u) for u in self._search(args)))
                    say(f"{tag} OK SEARCH completed")
                    if self.after_search is not None:
                        self.after_search(args)
                elif command == "UID FETCH":
                    self._fetch(args, say)
                    say(f"{tag} OK FETCH completed")
                elif command == "UID STORE":
                    self._store(args)
                    say(f"{tag} OK STORE completed")
                elif command == "IDLE" and self.idle:
                    await self._idle(tag, reader, say, writer, news)
                else:
                    say(f"{tag} BAD unknown command {command}")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    def _uids(self, spec: str) -> list[int]:
        """The UIDs a sequence set ("3", "2:5", "4:*", "1,3") names; "n:*" always includes
        the newest, as RFC 3501 says."""
        newest = self.mail[-1].uid if self.mail else 0
        found: set[int] = set()
        for piece in spec.split(","):
            low, _, high = piece.partition(":")
            a = newest if low == "*" else int(low)
            b = a if not high else (newest if high == "*" else int(high))
            a, b = min(a, b), max(a, b)
            found |= {m.uid for m in self.mail if a <= m.uid <= b}
        return sorted(found)

    def _search(self, criteria: str) -> list[int]:
        words = criteria.split()
        if words[:1] == ["ALL"]:
            return [m.uid for m in self.mail]
        if words[:1] == ["UID"] and len(words) == 2:
            return self._uids(words[1])
        raise ValueError(f"the fake IMAP server does not search {criteria!r}")

    def _fetch(self, args: str, say: object) -> None:
        spec, _, items = args.partition(" ")
        assert callable(say)
        for uid in self._uids(spec):
            index = next(i for i, m in enumerate(self.mail) if m.uid == uid)
            mail = self.mail[index]
            if "BODY.PEEK[]" not in items.upper():
                mail.flags.add("\\Seen")  # BODY[] sets \Seen, as on a real server
            raw, label = mail.raw, "BODY[]"
            partial = re.search(r"\[\]<(\d+)\.(\d+)>", items)
            if partial:  # BODY[]<start.count>: that slice only, as RFC 3501 says
                start, count = int(partial.group(1)), int(partial.group(2))
                raw, label = raw[start : start + count], f"BODY[]<{start}>"
            head = f"* {index + 1} FETCH (UID {uid} {label} {{{len(raw)}}}"
            say(head.encode() + b"\r\n" + raw + b")")

    def _store(self, args: str) -> None:
        match = re.match(r"(\S+) ([+-]?)FLAGS(?:\.SILENT)? \((.*)\)", args, re.IGNORECASE)
        if match is None:
            raise ValueError(f"the fake IMAP server cannot STORE {args!r}")
        spec, sign, flags = match.groups()
        for uid in self._uids(spec):
            mail = next(m for m in self.mail if m.uid == uid)
            if sign == "+":
                mail.flags |= set(flags.split())
            elif sign == "-":
                mail.flags -= set(flags.split())
            else:
                mail.flags = set(flags.split())

    async def _idle(
        self,
        tag: str,
        reader: asyncio.StreamReader,
        say: object,
        writer: asyncio.StreamWriter,
        news: Callable[[], str],
    ) -> None:
        assert callable(say)
        queue: asyncio.Queue[int] = asyncio.Queue()
        self._idlers.add(queue)
        # What came since the session's last look, told with the "+" in one write (so a
        # client reads both at once), before it or after it.
        while self.chatter_instead_of_idling and not writer.is_closing():
            say("* OK still thinking")
            await writer.drain()
            await asyncio.sleep(0.01)
        told = news()
        lines = [told, "+ idling"] if self.news_before_idling else ["+ idling", told]
        say("\r\n".join(line for line in lines if line))
        await writer.drain()
        done = asyncio.ensure_future(reader.readline())
        try:
            while True:
                arrived = asyncio.ensure_future(queue.get())
                await asyncio.wait({done, arrived}, return_when=asyncio.FIRST_COMPLETED)
                if arrived.done():
                    if line := news():
                        say(line)
                    await writer.drain()
                else:
                    arrived.cancel()
                if done.done():
                    break
        finally:
            self._idlers.discard(queue)
        if done.result().strip().upper() != b"DONE":
            say(f"{tag} BAD expected DONE")
        else:
            say(f"{tag} OK IDLE terminated")
