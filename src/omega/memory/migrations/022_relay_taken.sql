-- A relayed message stays queued until the leader has sent it: taking it marks it with the
-- leader and a lease (a leader that dies before sending leaves it to the next one), and the
-- sent row is deleted (memory/relay.py).
ALTER TABLE channel_relay ADD COLUMN taken_by TEXT;
ALTER TABLE channel_relay ADD COLUMN taken_until TEXT;
ALTER TABLE channel_relay ADD COLUMN attempts INT NOT NULL DEFAULT 0;
