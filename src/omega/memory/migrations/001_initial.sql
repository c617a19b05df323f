-- Conversations, messages (with FTS5), facts per sender, summaries.
CREATE TABLE conversations (
    id            TEXT PRIMARY KEY,
    channel       TEXT NOT NULL,
    sender_id     TEXT NOT NULL,
    project       TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'closed')),
    started_at    TEXT NOT NULL,
    last_activity TEXT NOT NULL,
    closed_at     TEXT
);
CREATE INDEX idx_conversations_sender ON conversations (channel, sender_id, status);
CREATE INDEX idx_conversations_activity ON conversations (status, last_activity);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    channel         TEXT NOT NULL,
    sender_id       TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX idx_messages_conversation ON messages (conversation_id, id);
CREATE INDEX idx_messages_sender ON messages (sender_id, id);

-- dialect: sqlite
-- sender_id is indexed too so recall can narrow to one person before ranking.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content,
    sender_id,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content, sender_id)
    VALUES (new.id, new.content, new.sender_id);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, sender_id)
    VALUES ('delete', old.id, old.content, old.sender_id);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, sender_id ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, sender_id)
    VALUES ('delete', old.id, old.content, old.sender_id);
    INSERT INTO messages_fts (rowid, content, sender_id)
    VALUES (new.id, new.content, new.sender_id);
END;
-- dialect: postgresql
-- Full-text recall (SQLite: the FTS5 table messages_fts). The content, lower-cased with the
-- common Latin diacritics folded (as FTS5's unicode61 remove_diacritics does), as 'simple'
-- lexemes; recall narrows to one sender by the sender index, then matches this column.
ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', translate(lower(content), 'àáâãäåāăąçćčďèéêëēėęěìíîïīįłñńňòóôõöøōőŕřśšşťùúûüūůűųýÿźżž', 'aaaaaaaaacccdeeeeeeeeiiiiiilnnnoooooooorrssstuuuuuuuuyyzzz'))
) STORED;
CREATE INDEX idx_messages_search ON messages USING GIN (search);
-- dialect: end

CREATE TABLE facts (
    id         INTEGER PRIMARY KEY,
    sender_id  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (sender_id, key)
);

CREATE TABLE summaries (
    id              INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    sender_id       TEXT NOT NULL,
    summary         TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX idx_summaries_sender ON summaries (sender_id, created_at);
