-- The name an OAuth client claimed when the owner consented, kept with
-- its code and grant: a client whose client_id is the URL of its metadata
-- document (docs/mcp.md, "OAuth") has no row in oauth_clients.
ALTER TABLE oauth_codes ADD COLUMN client_name TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_grants ADD COLUMN client_name TEXT NOT NULL DEFAULT '';
-- Grants by account, for the owner's list.
CREATE INDEX oauth_grants_account ON oauth_grants (account_id, created_at);
