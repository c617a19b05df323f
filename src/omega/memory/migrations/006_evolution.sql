-- Procedural memory (spec 004): proposals with their gate decision and review, prompt
-- fragments promoted from review feedback, and what introspection learned.
CREATE TABLE proposals (
    id              INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('skill', 'tool')),
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    category        TEXT NOT NULL DEFAULT 'other',
    spec            TEXT NOT NULL,                 -- the validated proposal, JSON
    goal            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL,                 -- limitation, planner, introspection, critic
    evidence        TEXT NOT NULL DEFAULT '[]',    -- JSON list
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'approved', 'rejected')),
    gate_action     TEXT NOT NULL DEFAULT '',      -- approve, reject, manual_review
    validation      TEXT NOT NULL DEFAULT '{}',    -- the gate's errors and warnings, JSON
    reviewer_notes  TEXT NOT NULL DEFAULT '',
    reviewed_by     TEXT NOT NULL DEFAULT '',
    times_seen      INTEGER NOT NULL DEFAULT 1,    -- similar proposals merged into this one
    created_at      TEXT NOT NULL,
    decided_at      TEXT
);
CREATE INDEX idx_proposals_status ON proposals (status, id);
CREATE INDEX idx_proposals_name ON proposals (name COLLATE NOCASE);

CREATE TABLE prompt_fragments (
    id          INTEGER PRIMARY KEY,
    run_kind    TEXT NOT NULL,                     -- e.g. introspection_evaluation
    text        TEXT NOT NULL,
    source      TEXT NOT NULL DEFAULT '',          -- e.g. proposal:3 review notes
    active      INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at  TEXT NOT NULL
);

CREATE TABLE learnings (
    id          INTEGER PRIMARY KEY,
    agent       TEXT NOT NULL,
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE introspection_cycles (
    id                 INTEGER PRIMARY KEY,
    agent              TEXT NOT NULL,
    last_tool_call_id  INTEGER NOT NULL,
    status             TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'over_budget', 'error')),
    attempts           INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    summary            TEXT NOT NULL DEFAULT '',
    satisfaction       REAL,
    created_at         TEXT NOT NULL
);
CREATE INDEX idx_introspection_agent ON introspection_cycles (agent, id);
