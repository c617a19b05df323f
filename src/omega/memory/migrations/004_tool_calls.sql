-- Every tool call any provider made: the raw material of introspection and the critic.
CREATE TABLE tool_calls (
    id              INTEGER PRIMARY KEY,
    created_at      TEXT NOT NULL,
    agent           TEXT NOT NULL,              -- the provider (and model) that called it
    channel         TEXT NOT NULL DEFAULT '',
    sender_id       TEXT NOT NULL DEFAULT '',
    conversation_id TEXT NOT NULL DEFAULT '',
    tool            TEXT NOT NULL,
    arguments       TEXT NOT NULL DEFAULT '{}', -- JSON, size-capped, secrets redacted
    ok              INTEGER NOT NULL CHECK (ok IN (0, 1)),
    error           TEXT NOT NULL DEFAULT '',
    result_preview  TEXT NOT NULL DEFAULT '',
    duration_ms     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_tool_calls_agent ON tool_calls (agent, id);
CREATE INDEX idx_tool_calls_tool ON tool_calls (tool, id);
