-- An MCP token that OAuth issued (docs/mcp.md) stops opening anything an
-- hour after it was issued; its client refreshes it. Other tokens do not
-- expire (NULL).
ALTER TABLE tokens ADD COLUMN expires_at BIGINT;
