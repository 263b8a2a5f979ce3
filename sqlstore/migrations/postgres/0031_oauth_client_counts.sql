-- Every client registration taken, by the address it came from, for the
-- per-address limit (docs/mcp.md, "OAuth"). It was counted from
-- oauth_clients, whose rows are deleted to make room (an unused client
-- ages out, an address holding many gives one up): a count must outlive
-- its client. A row is swept once it is older than the limit's window.
CREATE TABLE oauth_client_counts (
	requester  TEXT   NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX oauth_client_counts_requester ON oauth_client_counts (requester, created_at);
CREATE INDEX oauth_client_counts_created ON oauth_client_counts (created_at);
INSERT INTO oauth_client_counts (requester, created_at) SELECT requester, created_at FROM oauth_clients;
