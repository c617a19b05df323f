-- Every gap is seen once (issue 28): a limitation is recorded once, however many people or
-- background checks see it; each sighting says with whom (owner, person:<channel>:<id>, or ''
-- for Omega's own checks), by which source, when, and how often. A sighting with another person
-- waits for the owner's daily digest (digested_at).
CREATE TABLE limitation_sightings (
    id             INTEGER PRIMARY KEY,
    limitation_id  INTEGER NOT NULL REFERENCES limitations (id),
    seen_with      TEXT NOT NULL,
    source         TEXT NOT NULL,   -- marker, planner, heartbeat, critic, voice, integrity, ...
    first_seen     TEXT NOT NULL,
    last_seen      TEXT NOT NULL,
    count          INTEGER NOT NULL DEFAULT 1,
    digested_at    TEXT,
    UNIQUE (limitation_id, seen_with, source)
);
CREATE INDEX idx_sightings_person ON limitation_sightings (seen_with, first_seen);
CREATE INDEX idx_sightings_digest ON limitation_sightings (digested_at);

-- Limitations recorded before sightings were kept: one sighting each, from whoever reported it.
INSERT INTO limitation_sightings (limitation_id, seen_with, source, first_seen, last_seen,
                                  digested_at)
SELECT id,
       CASE WHEN reported_by = 'owner' OR reported_by LIKE 'person:%' THEN reported_by ELSE '' END,
       source, created_at, created_at, created_at
FROM limitations;

-- Whose private evidence a proposal carries ('' : the owner's or Omega's own): similar pending
-- proposals merge only within one scope, so one person's words never reach another's proposal.
ALTER TABLE proposals ADD COLUMN scope TEXT NOT NULL DEFAULT '';
