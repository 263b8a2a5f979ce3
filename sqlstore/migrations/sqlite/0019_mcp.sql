-- MCP (docs/mcp.md): an agent's MCP endpoint can be turned off, and an
-- MCP token records when it was last used (at most once a minute). An
-- account MCP token (agent_id '') lists the agents it acts for (ids,
-- comma-separated) and the one agent it created, if any.
ALTER TABLE agents ADD COLUMN mcp_off INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN last_used_at BIGINT;
ALTER TABLE tokens ADD COLUMN agents TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN created_agent TEXT NOT NULL DEFAULT '';
