-- What an audit entry records: an exchange, a denial, or a self-modification (with its diff).
ALTER TABLE audit_log ADD COLUMN event TEXT NOT NULL DEFAULT 'exchange';
CREATE INDEX idx_audit_event ON audit_log (event, created_at);
