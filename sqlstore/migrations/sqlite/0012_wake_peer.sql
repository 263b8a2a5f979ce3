-- A wake belongs to one conversation, and a conversation to the peer that
-- started it: two peers that send the same contextId to an agent are two
-- conversations, each with its own pending wake, tasks and sender. The
-- peer is empty for outbound updates (the conversation is our agent's
-- own). Wakes queued before this migration keep an empty peer.
ALTER TABLE wakes ADD COLUMN peer_id TEXT NOT NULL DEFAULT '';
DROP INDEX wakes_pending;
CREATE UNIQUE INDEX wakes_pending ON wakes (agent_id, peer_id, context_id, kind) WHERE state = 'pending';
