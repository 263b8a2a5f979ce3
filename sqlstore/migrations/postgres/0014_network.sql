-- The coordinator network (docs/network.md): approval, communities, the
-- skills discovery matches, and what tells a live agent from a gone one.

-- Agents already on the network stay on it: only agents created while the
-- deployment requires approval start unapproved.
ALTER TABLE agents ADD COLUMN approved INTEGER NOT NULL DEFAULT 1;

-- What discovery checks of each member, in an index it reads alone,
-- without the agent's row (and its card's JSON): the gates it asks to be
-- 1 follow the id, so that the lookup of a member searches this index by
-- all three (SQLite otherwise prefers the primary key and reads the row).
CREATE INDEX agents_gates ON agents (id, approved, accepts_tasks, account_id, mode);

-- A community exists once an agent joined it or the operator configured
-- it; closed ones take new members from the operator only.
CREATE TABLE communities (
	name       TEXT    PRIMARY KEY,
	closed     INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT  NOT NULL,
	updated_at BIGINT  NOT NULL
);
-- Members by community (discovery, directories, counts) and by agent
-- (an agent's communities, "do these two share one").
CREATE TABLE community_members (
	community TEXT   NOT NULL,
	agent_id  TEXT   NOT NULL,
	joined_at BIGINT NOT NULL,
	PRIMARY KEY (community, agent_id)
);
CREATE INDEX community_members_agent ON community_members (agent_id, community);

-- The ids and tags of each agent's public skills, lower case, written
-- with the agent: discovery matches a skill by a key, not by reading
-- every card's JSON.
CREATE TABLE agent_skills (
	agent_id TEXT NOT NULL,
	skill    TEXT NOT NULL,
	PRIMARY KEY (agent_id, skill)
);
CREATE INDEX agent_skills_skill ON agent_skills (skill, agent_id);
INSERT INTO agent_skills (agent_id, skill)
	SELECT g.id, lower(s.value->>'id') FROM agents g, jsonb_array_elements(g.skills::jsonb) s
	WHERE COALESCE(s.value->>'id', '') <> ''
	ON CONFLICT DO NOTHING;
INSERT INTO agent_skills (agent_id, skill)
	SELECT g.id, lower(t.value) FROM agents g, jsonb_array_elements(g.skills::jsonb) s,
		jsonb_array_elements_text(CASE WHEN jsonb_typeof(s.value->'tags') = 'array' THEN s.value->'tags' ELSE '[]'::jsonb END) t
	WHERE t.value <> ''
	ON CONFLICT DO NOTHING;

-- When each session was last opened or renewed (live: within the last
-- heartbeat interval), and when each agent's last session ended cleanly
-- (the reconnect grace). Sessions open before this migration count as
-- renewed when the next heartbeat renews them.
ALTER TABLE agent_sessions ADD COLUMN renewed_at BIGINT NOT NULL DEFAULT 0;
CREATE TABLE session_ends (
	agent_id TEXT   PRIMARY KEY,
	ended_at BIGINT NOT NULL
);

-- Tasks an agent of the deployment sent, or a community's peer: their
-- peer is no one agent's and follows its tasks on every agent.
ALTER TABLE tasks ADD COLUMN peer_kind TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_peer_global ON tasks (peer_id, status_at, id) WHERE peer_kind <> '';

-- Peer tokens of a community's address: agent_id is empty, account_id
-- the issuer. One active token per label and issuer in a community.
ALTER TABLE tokens ADD COLUMN community TEXT NOT NULL DEFAULT '';
DROP INDEX tokens_active;
CREATE UNIQUE INDEX tokens_active ON tokens (kind, account_id, agent_id, community, label) WHERE revoked_at IS NULL;
CREATE INDEX tokens_community ON tokens (community, account_id);
