-- Prompt tokens the provider read from its prompt cache (issue 27): part of input_tokens, counted
-- apart so the dashboard can show how much of each prompt was the cached stable prefix.
ALTER TABLE audit_log ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
