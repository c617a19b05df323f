-- Threads as conversations (issue 31): a Slack thread or a mail thread is a conversation of
-- its own, apart from the person's direct chat on that channel. `thread` is the channel's key
-- of the thread ('' for the chat itself); a person's open conversation is looked up by
-- channel, person and thread.
ALTER TABLE conversations ADD COLUMN thread TEXT NOT NULL DEFAULT '';
DROP INDEX idx_conversations_sender;
CREATE INDEX idx_conversations_sender ON conversations (channel, sender_id, thread, status);
