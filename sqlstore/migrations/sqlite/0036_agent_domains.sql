-- The host name an agent is also served at, at the root (docs/agents.md,
-- "Agent domains"): lower case, ASCII, or NULL for none. No two agents
-- hold the same; a request to an agent domain finds its agent by it.
ALTER TABLE agents ADD COLUMN domain TEXT;
CREATE UNIQUE INDEX agents_domain ON agents (domain);
