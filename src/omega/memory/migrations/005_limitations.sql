-- What Omega knows it cannot do yet (spec 000): deduplicated by title, case-insensitively.
CREATE TABLE limitations (
    id              INTEGER PRIMARY KEY,
    title           TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    proposed_plan   TEXT NOT NULL DEFAULT '',
    source          TEXT NOT NULL DEFAULT 'marker',  -- marker, planner, introspection, critic
    status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at      TEXT NOT NULL,
    resolved_at     TEXT,
    resolution      TEXT NOT NULL DEFAULT '',
    resolved_by     TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX idx_limitations_title ON limitations (title COLLATE NOCASE);
CREATE INDEX idx_limitations_status ON limitations (status, id);
