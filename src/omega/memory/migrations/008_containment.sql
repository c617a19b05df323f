-- Self-evolution containment (issue 10): what may run is pinned by content hash, refusals are
-- reported once, self-healing state lives here (not in a file the model can edit), learnings
-- and skill lessons are scoped to a person, and a lesson from a non-owner is a proposal.

-- Every skill folder or tool file allowed to load, pinned by the sha256 of its content.
CREATE TABLE artefacts (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('skill', 'tool')),
    name         TEXT NOT NULL,
    path         TEXT NOT NULL,                -- relative to $OMEGA_HOME
    sha256       TEXT NOT NULL,
    origin       TEXT NOT NULL CHECK (origin IN ('owner', 'approved')),
    proposal_id  INTEGER,
    pinned_by    TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    UNIQUE (kind, path)
);

-- A changed or unknown file that was not loaded: reported to the owner once per content.
CREATE TABLE artefact_refusals (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL,
    path         TEXT NOT NULL,
    sha256       TEXT NOT NULL,
    reason       TEXT NOT NULL,
    reported     INTEGER NOT NULL DEFAULT 0 CHECK (reported IN (0, 1)),
    created_at   TEXT NOT NULL,
    UNIQUE (path, sha256)
);

-- Self-healing sessions: the iteration count and escalation are Omega's, kept until the owner
-- clears an escalation. self-healing.json is only a readable view of the open session.
CREATE TABLE self_heal_sessions (
    id           INTEGER PRIMARY KEY,
    anomaly      TEXT NOT NULL,
    verification TEXT NOT NULL DEFAULT '',
    iteration    INTEGER NOT NULL DEFAULT 0,
    attempts     TEXT NOT NULL DEFAULT '[]',   -- JSON list
    status       TEXT NOT NULL DEFAULT 'open'
                 CHECK (status IN ('open', 'escalated', 'resolved', 'cleared')),
    started_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
-- One self-heal event per incoming message (a reply, all steps of a plan, or one scheduled
-- task however often it is retried).
CREATE TABLE self_heal_events (
    message_id   TEXT PRIMARY KEY,
    session_id   INTEGER,
    marker       TEXT NOT NULL,
    created_at   TEXT NOT NULL
);

-- Learnings belong to the person whose conversation they came from ('channel:sender'), or to
-- everyone ('*') only when the owner makes them so. Older unscoped rows are never recalled.
ALTER TABLE learnings ADD COLUMN scope TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_learnings_scope ON learnings (scope, id);

-- Lessons for skills live here, never in a SKILL.md (bundled and pinned files stay as they are).
CREATE TABLE skill_lessons (
    id           INTEGER PRIMARY KEY,
    skill        TEXT NOT NULL,
    text         TEXT NOT NULL,
    scope        TEXT NOT NULL,                -- '*' (owner) or 'channel:sender'
    source       TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    UNIQUE (skill, scope, text)
);

-- Proposals may now also be a lesson for an existing skill (SKILL_IMPROVE from a non-owner).
-- dialect: sqlite
CREATE TABLE proposals_new (
    id              INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('skill', 'tool', 'lesson')),
    name            TEXT NOT NULL,
    description     TEXT NOT NULL,
    category        TEXT NOT NULL DEFAULT 'other',
    spec            TEXT NOT NULL,
    goal            TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL,
    evidence        TEXT NOT NULL DEFAULT '[]',
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'approved', 'rejected')),
    gate_action     TEXT NOT NULL DEFAULT '',
    validation      TEXT NOT NULL DEFAULT '{}',
    reviewer_notes  TEXT NOT NULL DEFAULT '',
    reviewed_by     TEXT NOT NULL DEFAULT '',
    times_seen      INTEGER NOT NULL DEFAULT 1,
    created_at      TEXT NOT NULL,
    decided_at      TEXT
);
INSERT INTO proposals_new SELECT * FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_new RENAME TO proposals;
CREATE INDEX idx_proposals_status ON proposals (status, id);
CREATE INDEX idx_proposals_name ON proposals (name COLLATE NOCASE);
-- dialect: postgresql
ALTER TABLE proposals DROP CONSTRAINT proposals_kind_check;
ALTER TABLE proposals ADD CONSTRAINT proposals_kind_check CHECK (kind IN ('skill', 'tool', 'lesson'));
-- dialect: end
