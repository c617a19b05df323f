-- The gate's model judgements (issue 28): one valid verdict per content hash (sha256 of the
-- rubric version, the forbidden categories and the proposal), so the same content is never
-- judged twice. verdicts is the judge's validated JSON ({"verdicts": {category: {verdict,
-- reason}}}); model is the model that judged it.
CREATE TABLE gate_judgements (
    content_hash TEXT PRIMARY KEY,
    verdicts TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
