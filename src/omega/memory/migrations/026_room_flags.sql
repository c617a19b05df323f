-- Group rooms are other people's words (issue: room words): a conversation and a tool call
-- record whether they happened in a group room (1) or a direct chat, a mail or Slack thread (0).
-- The heartbeat (owner rights) treats a room conversation's summary as other people's words;
-- introspection keeps lessons drawn from a room's tool calls to the room, never the speaker's.
-- Rows from before are not rooms.
ALTER TABLE conversations ADD COLUMN is_group INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_calls ADD COLUMN is_group INTEGER NOT NULL DEFAULT 0;
