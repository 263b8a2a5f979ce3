-- Public fronts (docs/front.md): an agent's upstream A2A server, the
-- owner's credentials for it (sealed) and its last failure; the upstream's
-- ids of the front's tasks, and of each peer's contexts (kept per peer, so
-- two peers naming one context id never share an upstream conversation).
CREATE TABLE fronts (
	agent_id     TEXT   PRIMARY KEY,
	upstream     TEXT   NOT NULL,
	card_url     TEXT   NOT NULL DEFAULT '',
	credentials  TEXT   NOT NULL DEFAULT '',
	last_failure TEXT   NOT NULL DEFAULT '',
	updated_at   BIGINT NOT NULL
);

CREATE TABLE front_tasks (
	task_id             TEXT PRIMARY KEY,
	agent_id            TEXT NOT NULL,
	upstream_task_id    TEXT NOT NULL DEFAULT '',
	upstream_context_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX front_tasks_agent ON front_tasks (agent_id);

CREATE TABLE front_contexts (
	agent_id            TEXT   NOT NULL,
	peer_id             TEXT   NOT NULL,
	context_id          TEXT   NOT NULL,
	upstream_context_id TEXT   NOT NULL,
	created_at          BIGINT NOT NULL,
	PRIMARY KEY (agent_id, peer_id, context_id)
);
