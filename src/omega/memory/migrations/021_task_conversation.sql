-- Conversations follow privacy boundaries (issue 36): a scheduled action runs in the
-- conversation it was made in. `thread` is the message's thread ('' for none) and `is_group`
-- whether it was made in a group room (1) or a direct chat (0): an action made in a room
-- answers there with that room's history, never with what its creator said in private.
ALTER TABLE scheduled_tasks ADD COLUMN thread TEXT NOT NULL DEFAULT '';
ALTER TABLE scheduled_tasks ADD COLUMN is_group INT NOT NULL DEFAULT 0;
