"""The web page's one-time login tokens and its sessions, kept in the database so that every
replica serving the page accepts a login made on another: each replica has one token (the link
in its web.url), valid on every replica, used up by a login, dropped after a day. Only SHA-256
digests of the tokens and of the session cookies are stored (a copy of the database logs nobody
in)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from omega.memory.db import Database, from_db_time, to_db_time

SEEN_EVERY = timedelta(seconds=60)  # how stale last_seen may get before a request rewrites it
TOKEN_LIFETIME = timedelta(days=1)  # an unused login token; the page then writes a fresh one


def digest(secret: str) -> str:
    """The stored form of a token or a session id."""
    return hashlib.sha256(secret.encode()).hexdigest()


class WebSessions(Database):
    """Login tokens and sessions of the web page."""

    def web_token_replace(self, token: str, previous: str = "") -> None:
        """Make `token` a valid login token in place of `previous` (this replica's last one);
        the other replicas' tokens stay valid, tokens older than TOKEN_LIFETIME are dropped."""
        now = datetime.now(UTC)
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM web_login_tokens WHERE token_digest = ? OR created_at < ?",
                (digest(previous), to_db_time(now - TOKEN_LIFETIME)),
            )
            conn.execute(
                "INSERT INTO web_login_tokens (token_digest, created_at) VALUES (?, ?)",
                (digest(token), to_db_time(now)),
            )

    def web_token_valid(self, token: str) -> bool:
        """Whether `token` would still log in (not used, not too old)."""
        rows = self._query(
            "SELECT 1 FROM web_login_tokens WHERE token_digest = ? AND created_at >= ?",
            (digest(token), to_db_time(datetime.now(UTC) - TOKEN_LIFETIME)),
        )
        return bool(rows)

    def web_login(self, token: str, session_id: str, csrf: str) -> bool:
        """Use `token` up and start the session `session_id` with it; False for a token that
        is not (or no longer) valid. Two replicas given the same token: one wins."""
        moment = datetime.now(UTC)
        now = to_db_time(moment)
        with self._tx() as conn:
            used = conn.execute(
                "DELETE FROM web_login_tokens WHERE token_digest = ? AND created_at >= ?",
                (digest(token), to_db_time(moment - TOKEN_LIFETIME)),
            ).rowcount
            if used != 1:
                return False
            conn.execute(
                "INSERT INTO web_sessions (id_digest, csrf, created_at, last_seen) "
                "VALUES (?, ?, ?, ?)",
                (digest(session_id), csrf, now, now),
            )
            return True

    def web_session_peek(self, session_id: str, max_idle_s: float) -> tuple[str, bool] | None:
        """Read only: the CSRF token of the live session `session_id` and whether its use is
        due to be noted again (last noted over SEEN_EVERY ago); None for no session or an
        expired one. A made-up cookie costs a read, never a write (`web_session` writes)."""
        rows = self._query(
            "SELECT csrf, last_seen FROM web_sessions WHERE id_digest = ?", (digest(session_id),)
        )
        if not rows:
            return None
        idle = datetime.now(UTC) - from_db_time(str(rows[0]["last_seen"]))
        if idle > timedelta(seconds=max_idle_s):
            return None
        return str(rows[0]["csrf"]), idle > SEEN_EVERY

    def web_session(self, session_id: str, max_idle_s: float) -> str | None:
        """The CSRF token of the live session `session_id` (its use noted), or None; sessions
        idle longer than `max_idle_s` are deleted."""
        moment = datetime.now(UTC)
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM web_sessions WHERE last_seen < ?",
                (to_db_time(moment - timedelta(seconds=max_idle_s)),),
            )
            row = conn.execute(
                "SELECT csrf, last_seen FROM web_sessions WHERE id_digest = ?",
                (digest(session_id),),
            ).fetchone()
            if row is None:
                return None
            if moment - from_db_time(row[1]) > SEEN_EVERY:
                conn.execute(
                    "UPDATE web_sessions SET last_seen = ? WHERE id_digest = ?",
                    (to_db_time(moment), digest(session_id)),
                )
            return str(row[0])

    def web_logout(self, session_id: str) -> None:
        """End one session."""
        with self._tx() as conn:
            conn.execute("DELETE FROM web_sessions WHERE id_digest = ?", (digest(session_id),))
