-- Self-healing (evolution/heal/sessions.py): at most one live (open or escalated) session. The
-- lifecycle counts each SELF_HEAL in one write transaction; the partial unique index below holds
-- the rule in the schema too, whatever writes. Sessions an earlier race left live beside the
-- newest are cleared first, their pending verification tasks cancelled and forgotten.
UPDATE scheduled_tasks SET status = 'cancelled'
WHERE status = 'pending' AND id IN (
    SELECT s.key FROM state s JOIN self_heal_sessions h ON s.scope = 'self_heal:' || h.id
    WHERE h.status IN ('open', 'escalated')
      AND h.id < (SELECT MAX(id) FROM self_heal_sessions WHERE status IN ('open', 'escalated'))
);
DELETE FROM state WHERE scope IN (
    SELECT 'self_heal:' || id FROM self_heal_sessions
    WHERE status IN ('open', 'escalated')
      AND id < (SELECT MAX(id) FROM self_heal_sessions WHERE status IN ('open', 'escalated'))
);
UPDATE self_heal_sessions SET status = 'cleared'
WHERE status IN ('open', 'escalated')
  AND id < (SELECT MAX(id) FROM self_heal_sessions WHERE status IN ('open', 'escalated'));
CREATE UNIQUE INDEX idx_self_heal_sessions_live ON self_heal_sessions ((1))
    WHERE status IN ('open', 'escalated');
-- The cap counts the SELF_HEAL events of the last 24 hours (session_id set once counted).
CREATE INDEX idx_self_heal_events_created ON self_heal_events (created_at);
