-- MCP (docs/mcp.md): an agent's MCP endpoint can be turned off, and an
-- MCP token records when it was last used (at most once a minute).
ALTER TABLE agents ADD COLUMN mcp_off INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN last_used_at BIGINT;
