-- More than one Omega on one database (issue 30). Every `omega start` is a replica: it writes
-- its row at start, beats while it runs, and marks its stop. A job that must run once across
-- the fleet (the scheduler, the heartbeat, ...) and a channel that only one process may read
-- (Telegram's getUpdates, the WhatsApp session) runs on the replica holding its lease; a lease
-- not renewed before expires_at can be taken over by any replica. Times are the store's
-- sortable UTC text, written by the replicas' clocks (keep them synchronised).
CREATE TABLE replicas (
    id         TEXT PRIMARY KEY,       -- host:pid:random, made once per process
    host       TEXT NOT NULL,          -- host name and PID namespace (whose pids it can check)
    pid        INTEGER NOT NULL,
    version    TEXT NOT NULL,
    started_at TEXT NOT NULL,
    seen_at    TEXT NOT NULL,          -- its last beat
    holds      TEXT NOT NULL DEFAULT '', -- the leases it held at that beat, comma-separated
    stopped_at TEXT                    -- a clean stop (NULL: running, or died)
);
CREATE INDEX idx_replicas_seen ON replicas (seen_at);

CREATE TABLE leases (
    name        TEXT PRIMARY KEY,      -- "job:scheduler", "channel:telegram", ...
    holder      TEXT NOT NULL,         -- a replicas.id
    acquired_at TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    renewed_at  TEXT NOT NULL
);

-- The web page's logins, shared by every replica that serves it: a session made on one is
-- valid on all. Only SHA-256 digests of the cookie value and of the one-time login token are
-- stored; the session's CSRF token is compared to what the page sends.
CREATE TABLE web_sessions (
    id_digest  TEXT PRIMARY KEY,
    csrf       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_seen  TEXT NOT NULL
);
CREATE INDEX idx_web_sessions_seen ON web_sessions (last_seen);

CREATE TABLE web_login_tokens (
    token_digest TEXT PRIMARY KEY,
    created_at   TEXT NOT NULL
);

-- What a replica sends on a channel only the leader can send on (the one WhatsApp session):
-- the OutgoingMessage as JSON (a photo in base64), taken and sent by the replica holding the
-- lease `channel:<name>`, oldest first.
CREATE TABLE channel_relay (
    id         TEXT PRIMARY KEY,       -- random hex
    channel    TEXT NOT NULL,
    message    TEXT NOT NULL,
    origin     TEXT NOT NULL,          -- the replicas.id that asked
    created_at TEXT NOT NULL
);
CREATE INDEX idx_channel_relay ON channel_relay (channel, created_at);
