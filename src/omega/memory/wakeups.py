"""Wake-ups between replicas on PostgreSQL: LISTEN/NOTIFY instead of waiting for a poll.

A write that another replica should act on at once (a new inbox row, a message relayed to a
channel's leader, a change of run-time settings) also sends `NOTIFY omega_wake, '<topic>'`
inside its own transaction, so the notification is delivered when, and only when, the write
commits. Each replica listens on one connection of its own (a daemon thread blocked in
psycopg's `notifies`) and sets the asyncio events of the topic. Waiting is always bounded by
the caller's poll interval, which stays as the fallback: a lost connection, a notification
sent while it reconnected, or SQLite (no replicas on other hosts, nothing to listen to) costs
at most one poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading

log = logging.getLogger(__name__)

CHANNEL = "omega_wake"
RECONNECT_SECS = 1.0
INBOX = "inbox"  # a message waits in the inbox for a replica to claim it
CONFIG = "config"  # run-time settings changed (the heartbeat interval)
TASKS = "tasks"  # a scheduled task is due sooner than the scheduler planned


def relay_topic(channel: str) -> str:
    """The topic of messages relayed to `channel`'s leader."""
    return f"relay:{channel}"


def notify(conn: sqlite3.Connection, dialect: str, topic: str) -> None:
    """Inside a write transaction: wake the replicas waiting on `topic` once it commits (on
    PostgreSQL; SQLite has nobody to wake)."""
    if dialect == "postgresql":
        conn.execute("SELECT pg_notify(?, ?)", (CHANNEL, topic))


class Listener:
    """LISTEN on a connection of its own; each notification sets the asyncio events that
    wait for its topic. Started on first use, stopped by `close`."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._events: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.listening = threading.Event()  # set while a LISTEN is in place

    def event(self, topic: str) -> asyncio.Event:
        """An event of the running loop that is set on each notification of `topic` (the
        waiter clears it before acting)."""
        event = asyncio.Event()
        with self._guard:
            self._events.setdefault(topic, []).append((asyncio.get_running_loop(), event))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="omega-wake", daemon=True)
                self._thread.start()
        return event

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening.set()
                    self._fire_all()  # what came while (re)connecting is looked at now
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            self._fire(note.payload)
            except Exception as exc:  # the server restarted, the link dropped: the poll covers
                if self._stop.is_set():
                    break
                log.warning("wake-ups: listening failed (%s); polls carry on", exc)
            finally:
                self.listening.clear()
            self._stop.wait(RECONNECT_SECS)

    def _fire(self, topic: str) -> None:
        with self._guard:
            waiting = list(self._events.get(topic, ()))
        for loop, event in waiting:
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits
                loop.call_soon_threadsafe(event.set)

    def _fire_all(self) -> None:
        with self._guard:
            topics = list(self._events)
        for topic in topics:
            self._fire(topic)

    def close(self) -> None:
        """Stop listening (within about half a second)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)


async def wait_for(event: asyncio.Event | None, seconds: float) -> bool:
    """Wait until `event` is set or `seconds` pass (a plain sleep without an event); True
    when woken. The event is cleared for the next wait.

    A cancellation is never lost, even when the event is set in the same instant: Python
    3.11's `asyncio.wait_for` then returns the result and drops the cancellation, and the
    inbox poll, a `while True` loop around this wait, went on forever (a shutdown hung in
    `end_tasks`, waiting for it). `asyncio.timeout` re-raises it."""
    if event is None:
        await asyncio.sleep(seconds)
        return False
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    event.clear()
    return True
