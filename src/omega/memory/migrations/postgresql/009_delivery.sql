-- Exactly-once delivery and strangers who cost nothing (issue 17).

-- The answer to an inbox message, stored (JSON list of outgoing messages: kind, text, and for
-- images their bytes) before it is sent. A restart re-sends it instead of asking the provider
-- again. A handled message stays as status 'done' with its payload emptied: only its id is
-- kept (a bounded record), so a channel that delivers the same message id twice is answered
-- once.
ALTER TABLE inbox ADD COLUMN reply TEXT;
ALTER TABLE inbox ADD COLUMN replied_at TEXT;
CREATE INDEX idx_inbox_finished ON inbox (status, finished_at);

-- The last time a sender who is not on the allow-list was answered and audited; further
-- messages inside `[limits] denial_every_secs` are dropped without a trace beyond `dropped`.
CREATE TABLE denials (
    channel      TEXT NOT NULL,
    sender_id    TEXT NOT NULL,
    last_at      TEXT NOT NULL,          -- when the last denial was answered and audited (UTC)
    dropped      BIGINT NOT NULL DEFAULT 0,  -- messages dropped silently since then
    PRIMARY KEY (channel, sender_id)
);
CREATE INDEX idx_denials_last ON denials (last_at);
