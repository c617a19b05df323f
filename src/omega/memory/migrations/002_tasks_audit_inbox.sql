-- Scheduled tasks, the audit log and the durable inbox of incoming messages.
CREATE TABLE scheduled_tasks (
    id           TEXT PRIMARY KEY,
    channel      TEXT NOT NULL,
    sender_id    TEXT NOT NULL,
    reply_target TEXT NOT NULL,
    description  TEXT NOT NULL,
    task_type    TEXT NOT NULL DEFAULT 'reminder' CHECK (task_type IN ('reminder', 'action')),
    due_at       TEXT NOT NULL,                 -- next occurrence, UTC
    anchor_local TEXT NOT NULL DEFAULT '',      -- first occurrence, wall-clock in `timezone`
    repeat       TEXT NOT NULL DEFAULT 'once'
                 CHECK (repeat IN ('once', 'daily', 'weekly', 'monthly', 'weekdays')),
    timezone     TEXT NOT NULL DEFAULT 'UTC',
    -- 'delivering': claimed by the scheduler; if Omega dies before the bookkeeping, the
    -- occurrence counts as sent on restart rather than firing twice.
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'delivering', 'delivered', 'cancelled', 'failed')),
    retry_count  INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    created_at   TEXT NOT NULL,
    delivered_at TEXT
);
CREATE INDEX idx_tasks_due ON scheduled_tasks (status, due_at);
CREATE INDEX idx_tasks_sender ON scheduled_tasks (sender_id, status);

CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY,
    created_at     TEXT NOT NULL,
    channel        TEXT NOT NULL,
    sender_id      TEXT NOT NULL,
    sender_name    TEXT NOT NULL DEFAULT '',
    input_text     TEXT NOT NULL DEFAULT '',
    output_text    TEXT NOT NULL DEFAULT '',
    provider       TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL DEFAULT '',
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    cost_usd       REAL,
    processing_ms  INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL CHECK (status IN ('ok', 'denied', 'error')),
    detail         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_audit_created ON audit_log (created_at);
CREATE INDEX idx_audit_sender ON audit_log (sender_id, created_at);

CREATE TABLE inbox (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    channel      TEXT NOT NULL,
    sender_id    TEXT NOT NULL,
    payload      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    received_at  TEXT NOT NULL,
    finished_at  TEXT,
    last_error   TEXT
);
CREATE INDEX idx_inbox_pending ON inbox (status, seq);
