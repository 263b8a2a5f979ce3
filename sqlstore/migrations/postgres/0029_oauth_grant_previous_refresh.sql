-- The refresh hash a grant had before its last rotation: a refresh token
-- used again after it was rotated ends its grant (docs/mcp.md, "OAuth").
ALTER TABLE oauth_grants ADD COLUMN previous_refresh_hash TEXT NOT NULL DEFAULT '';
CREATE INDEX oauth_grants_previous_refresh ON oauth_grants (previous_refresh_hash);
