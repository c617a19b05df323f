-- Small durable state that lives in the store, not in files of one host, so any replica
-- (on any machine) reads what another wrote: a channel's cursor and sync token
-- (scope 'channel:<name>'), run-time settings such as the heartbeat interval (scope
-- 'settings'). Values are JSON (memory/state.py).
CREATE TABLE state (
    scope      TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope, key)
);
