-- Messages our agents sent to other A2A agents, and what came back: one row
-- per send. remote_task_id is the remote task's ('' until the target names it);
-- push_hash is the SHA-256 of the token the target presents with pushes
-- ('' when none was asked for). data holds the rest as JSON (text sent,
-- remote task, reply, error, the last updates).
CREATE TABLE outbound (
	id         TEXT   PRIMARY KEY,
	agent_id   TEXT   NOT NULL,
	target     TEXT   NOT NULL,
	endpoint   TEXT   NOT NULL,
	protocol   TEXT   NOT NULL,
	remote_task_id TEXT NOT NULL DEFAULT '',
	context_id TEXT   NOT NULL DEFAULT '',
	state      TEXT   NOT NULL DEFAULT '',
	push_hash  TEXT   NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	data       TEXT   NOT NULL
);
CREATE INDEX outbound_agent ON outbound (agent_id, updated_at);
CREATE INDEX outbound_task ON outbound (agent_id, remote_task_id);
CREATE INDEX outbound_context ON outbound (agent_id, context_id, created_at);
CREATE INDEX outbound_push ON outbound (push_hash) WHERE push_hash <> '';
