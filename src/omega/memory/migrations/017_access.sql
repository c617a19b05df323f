-- People join safely (issue 29). Who may talk to Omega beyond the config's allow-lists, and the
-- strangers waiting to be paired. The config stays the seed and the override: an id it lists is
-- always allowed (and `[auth] owners` always owners), whatever these tables say.

-- One row per channel id the owner decided about at run time: let in (pairing, `omega people
-- allow`) as 'person' or 'owner', or 'revoked' (turned away: no pairing code either, until the
-- owner allows them again). Every change is also an audit_log row (event access:*).
CREATE TABLE access_grants (
    channel    TEXT NOT NULL,
    sender_id  TEXT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('person', 'owner', 'revoked')),
    granted_by TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (channel, sender_id)
);

-- A stranger's request to talk, under dm_policy = "pairing". The code is never stored: only
-- HMAC-SHA256(salt, code) with a random salt per row. first_words (capped, shown quoted to the
-- owner) and sender_name are blanked once the request is no longer pending; rows older than a
-- day are deleted (they are kept that long only to limit how many codes one sender obtains).
CREATE TABLE pairing_requests (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    channel      TEXT NOT NULL,
    sender_id    TEXT NOT NULL,
    reply_target TEXT NOT NULL,
    sender_name  TEXT NOT NULL DEFAULT '',
    first_words  TEXT NOT NULL DEFAULT '',
    salt         TEXT NOT NULL,
    code_hash    TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    resolved_at  TEXT,
    told_at      TEXT  -- approved: when the person was told (NULL: not yet)
);
CREATE INDEX idx_pairing_status ON pairing_requests (status, channel, created_at);
CREATE INDEX idx_pairing_sender ON pairing_requests (channel, sender_id, created_at);

-- Every code entered by the owner on any surface (CLI, chat command, web page), to refuse a
-- surface that guesses: `actor` is "cli", "web" or "channel:id".
CREATE TABLE pairing_attempts (
    actor TEXT NOT NULL,
    at    TEXT NOT NULL,
    ok    INTEGER NOT NULL
);
CREATE INDEX idx_pairing_attempts ON pairing_attempts (actor, at);
