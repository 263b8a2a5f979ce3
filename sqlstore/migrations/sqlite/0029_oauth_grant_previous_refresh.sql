-- The refresh hash a grant had before its last rotation, and when that
-- rotation was: a refresh token used again after it was rotated ends its
-- grant, unless it comes right after the rotation, as a client's second
-- refresh at the same time would (docs/mcp.md, "OAuth").
ALTER TABLE oauth_grants ADD COLUMN previous_refresh_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_grants ADD COLUMN rotated_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX oauth_grants_previous_refresh ON oauth_grants (previous_refresh_hash);
