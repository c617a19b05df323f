-- N replicas share one inbox (issue 30). A pending message is handled by the replica that
-- claimed it: `claimed_by` (the replica's id) until `lease_until` (UTC, renewed while the turn
-- runs). A claim whose lease ran out belongs to nobody: another replica takes the message over
-- under the exactly-once rules (a kept reply is re-sent, the provider is not asked again).
-- Only the oldest pending message of a sender is ever claimed, so one sender's messages are
-- handled strictly in order across replicas. `received_by` is the replica that accepted the
-- message: a channel whose replies can only leave from that process (the terminal, the web
-- page's open connection) is answered by it alone.
ALTER TABLE inbox ADD COLUMN claimed_by TEXT;
ALTER TABLE inbox ADD COLUMN lease_until TEXT;
ALTER TABLE inbox ADD COLUMN received_by TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_inbox_sender_pending ON inbox (status, channel, sender_id, seq);
CREATE INDEX idx_inbox_claims ON inbox (claimed_by, lease_until);
