-- Accounts own agents. Times are Unix nanoseconds (UTC) in every table.
CREATE TABLE accounts (
	id         TEXT    PRIMARY KEY,
	name       TEXT    NOT NULL UNIQUE,
	role       TEXT    NOT NULL,
	disabled   INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT  NOT NULL,
	updated_at BIGINT  NOT NULL
);

CREATE TABLE agents (
	id              TEXT    PRIMARY KEY,
	account_id      TEXT    NOT NULL,
	handle          TEXT    NOT NULL UNIQUE,
	name            TEXT    NOT NULL,
	description     TEXT    NOT NULL,
	mode            TEXT    NOT NULL,
	version         TEXT    NOT NULL,
	skills          TEXT    NOT NULL, -- JSON array of A2A AgentSkill
	extended_skills TEXT    NOT NULL, -- JSON array of A2A AgentSkill
	accepts_tasks   INTEGER NOT NULL,
	created_at      BIGINT  NOT NULL,
	updated_at      BIGINT  NOT NULL
);
CREATE INDEX agents_account ON agents (account_id);

-- Every credential, by the SHA-256 of its secret. At most one active token
-- per (kind, account, agent, label): one owner token per account, one peer
-- token per label and agent. peer_id names the peer a peer token belongs
-- to: a rotation keeps it, a new token (even with an old label) gets a new one.
CREATE TABLE tokens (
	hash       TEXT   PRIMARY KEY,
	kind       TEXT   NOT NULL,
	account_id TEXT   NOT NULL DEFAULT '',
	agent_id   TEXT   NOT NULL DEFAULT '',
	label      TEXT   NOT NULL DEFAULT '',
	peer_id    TEXT   NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	revoked_at BIGINT
);
CREATE UNIQUE INDEX tokens_active ON tokens (kind, account_id, agent_id, label) WHERE revoked_at IS NULL;
CREATE INDEX tokens_agent ON tokens (agent_id);

-- Tasks keep their A2A 1.0 JSON in data; the other columns are for lookups.
CREATE TABLE tasks (
	id         TEXT   PRIMARY KEY,
	agent_id   TEXT   NOT NULL,
	peer_id    TEXT   NOT NULL,
	peer_label TEXT   NOT NULL,
	context_id TEXT   NOT NULL,
	state      TEXT   NOT NULL,
	protocol   TEXT   NOT NULL,
	seq        BIGINT NOT NULL,
	status_at  BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	data       TEXT   NOT NULL
);
CREATE INDEX tasks_peer ON tasks (agent_id, peer_id, status_at, id);
CREATE INDEX tasks_agent_state ON tasks (agent_id, state, created_at);

-- The per-task event log: one row per change, seq grows by one per task.
CREATE TABLE task_events (
	task_id    TEXT   NOT NULL,
	seq        BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	data       TEXT   NOT NULL, -- A2A 1.0 StreamResponse JSON
	PRIMARY KEY (task_id, seq)
);

-- Message ids a peer sent to an agent, so a resent message changes nothing.
CREATE TABLE task_messages (
	agent_id   TEXT NOT NULL,
	peer_id    TEXT NOT NULL,
	message_id TEXT NOT NULL,
	task_id    TEXT NOT NULL,
	PRIMARY KEY (agent_id, peer_id, message_id)
);
CREATE INDEX task_messages_task ON task_messages (task_id);

CREATE TABLE push_configs (
	task_id    TEXT   NOT NULL,
	id         TEXT   NOT NULL,
	protocol   TEXT   NOT NULL,
	created_at BIGINT NOT NULL,
	data       TEXT   NOT NULL, -- A2A 1.0 TaskPushNotificationConfig JSON
	PRIMARY KEY (task_id, id)
);
