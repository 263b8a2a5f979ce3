-- Synced aliases (docs/mcp.md, "Send to other deployments"): the remote
-- A2A agents an agent sends to by alias, with the peer token the server
-- presents there, sealed for its row (agent and alias).
CREATE TABLE outbound_peers (
	agent_id  TEXT   NOT NULL,
	alias     TEXT   NOT NULL,
	url       TEXT   NOT NULL,
	token     TEXT   NOT NULL DEFAULT '',
	synced_at BIGINT NOT NULL,
	PRIMARY KEY (agent_id, alias)
);
