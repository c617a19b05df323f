-- Messages for the owner that no running channel could take yet; delivered when one can.
CREATE TABLE owner_alerts (
    id           INTEGER PRIMARY KEY,
    created_at   TEXT NOT NULL,
    kind         TEXT NOT NULL DEFAULT 'alert',
    text         TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered')),
    delivered_at TEXT,
    channel      TEXT NOT NULL DEFAULT '',
    target       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_owner_alerts_status ON owner_alerts (status, id);
