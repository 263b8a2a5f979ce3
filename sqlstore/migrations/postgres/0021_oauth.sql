-- OAuth 2.1 for MCP clients (docs/mcp.md, "OAuth"). Clients registered by
-- dynamic client registration (RFC 7591): public clients, no secret.
CREATE TABLE oauth_clients (
	id               TEXT   PRIMARY KEY,
	name             TEXT   NOT NULL,
	redirect_uris    TEXT   NOT NULL,
	application_type TEXT   NOT NULL,
	requester        TEXT   NOT NULL,
	created_at       BIGINT NOT NULL
);
-- Registrations by the address they came from (flood control), and by
-- age (pruning).
CREATE INDEX oauth_clients_requester ON oauth_clients (requester, created_at);
CREATE INDEX oauth_clients_age ON oauth_clients (created_at);

-- Authorization codes, as their SHA-256 only; deleted when read.
CREATE TABLE oauth_codes (
	hash         TEXT   PRIMARY KEY,
	client_id    TEXT   NOT NULL,
	redirect_uri TEXT   NOT NULL,
	challenge    TEXT   NOT NULL,
	resource     TEXT   NOT NULL,
	account_id   TEXT   NOT NULL,
	agent_id     TEXT   NOT NULL,
	agents       TEXT   NOT NULL,
	label        TEXT   NOT NULL,
	created_at   BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);
CREATE INDEX oauth_codes_agent ON oauth_codes (agent_id);

-- Live grants: the refresh token's hash and the hash of the MCP token it
-- issued last; a refresh replaces both.
CREATE TABLE oauth_grants (
	refresh_hash TEXT   PRIMARY KEY,
	access_hash  TEXT   NOT NULL UNIQUE,
	client_id    TEXT   NOT NULL,
	account_id   TEXT   NOT NULL,
	agent_id     TEXT   NOT NULL,
	agents       TEXT   NOT NULL,
	label        TEXT   NOT NULL,
	created_at   BIGINT NOT NULL
);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
CREATE INDEX oauth_grants_agent ON oauth_grants (agent_id);
