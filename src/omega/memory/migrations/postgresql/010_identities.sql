-- Who is who across channels. Memory (facts, summaries, conversations, tasks) is keyed by the
-- person; a channel's own id only says where they write from. A new id keeps its raw id as its
-- person when no other channel holds that id, else it becomes "channel:id"; the owner links
-- identities explicitly (`omega people link`).
CREATE TABLE identities (
    channel    TEXT NOT NULL,
    sender_id  TEXT NOT NULL,
    person     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (channel, sender_id)
);
CREATE INDEX idx_identities_person ON identities (person);

-- What existed: the first channel an id wrote from keeps the raw id, later ones are qualified.
INSERT INTO identities (channel, sender_id, person, created_at)
SELECT c.channel, c.sender_id,
       CASE WHEN c.channel = (
                SELECT c2.channel FROM conversations c2 WHERE c2.sender_id = c.sender_id
                ORDER BY c2.started_at, c2.channel LIMIT 1)
            THEN c.sender_id ELSE c.channel || ':' || c.sender_id END,
       MIN(c.started_at)
FROM conversations c GROUP BY c.channel, c.sender_id;

-- The channel id a task's creator wrote from (for their rights), when it differs from the person.
ALTER TABLE scheduled_tasks ADD COLUMN origin_id TEXT NOT NULL DEFAULT '';
