-- Rights never travel (issue 24). The role a task's creator had when they made it: an edit
-- needs at least that role, and an action never runs with more. '' for tasks made before this
-- (their creator's role is then worked out from the channel id that made them).
ALTER TABLE scheduled_tasks ADD COLUMN creator_role TEXT NOT NULL DEFAULT '';

-- Who a limitation's text came from: 'owner' (a turn answering the owner), 'person:<key>',
-- 'tool critic', 'heartbeat', 'integrity check'. Only the owner's text enters HEARTBEAT.md as
-- a checklist line; anything else is quoted there, and in owner alerts, with its source.
ALTER TABLE limitations ADD COLUMN reported_by TEXT NOT NULL DEFAULT '';
