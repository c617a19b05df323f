-- The notification gate (gateway/notify.py): what Omega sends unasked and holds for a person's
-- digest (during their quiet hours, or over their daily cap), kept until the digest that carries
-- it was delivered; and how many unasked messages each person got on each of their days.
-- A replica takes the due rows of a digest under a lease (taken_by, taken_until) and marks them
-- sent once it went out: a replica that dies between the two leaves them to the next one.
CREATE TABLE held_messages (
    id          INTEGER PRIMARY KEY,
    person      TEXT NOT NULL,
    channel     TEXT NOT NULL,
    target      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    priority    TEXT NOT NULL,
    text        TEXT NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('quiet', 'cap')),
    created_at  TEXT NOT NULL,
    release_at  TEXT NOT NULL,
    taken_by    TEXT,
    taken_until TEXT,
    sent_at     TEXT
);
CREATE INDEX idx_held_messages_due ON held_messages (sent_at, release_at);
CREATE TABLE unasked_counts (
    person TEXT NOT NULL,
    day    TEXT NOT NULL,
    sent   INT NOT NULL DEFAULT 0,
    PRIMARY KEY (person, day)
);
