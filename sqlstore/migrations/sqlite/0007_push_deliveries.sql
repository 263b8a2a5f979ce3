-- Push notifications to peers. A row per push configuration of a task and
-- per change of the task that is pushed, written in the transaction of the
-- change. data holds the task as it stood (A2A 1.0 JSON) until the push is
-- sent or given up, then ''. While a push is sending, next_attempt_at holds
-- the end of its sender's lease.
CREATE TABLE push_deliveries (
	id              TEXT    PRIMARY KEY,
	task_id         TEXT    NOT NULL,
	config_id       TEXT    NOT NULL,
	seq             BIGINT  NOT NULL,
	task_state      TEXT    NOT NULL,
	state           TEXT    NOT NULL, -- queued | sending | sent | failed | canceled
	attempts        INTEGER NOT NULL DEFAULT 0,
	holder          TEXT    NOT NULL DEFAULT '',
	next_attempt_at BIGINT  NOT NULL,
	last_error      TEXT    NOT NULL DEFAULT '',
	last_status     INTEGER NOT NULL DEFAULT 0,
	created_at      BIGINT  NOT NULL,
	done_at         BIGINT,
	data            TEXT    NOT NULL
);
CREATE INDEX push_deliveries_config ON push_deliveries (task_id, config_id, seq);
CREATE INDEX push_deliveries_due ON push_deliveries (next_attempt_at) WHERE state IN ('queued', 'sending');

-- Every attempt to send a push, for the owner to read.
CREATE TABLE push_attempts (
	push_id         TEXT    NOT NULL,
	task_id         TEXT    NOT NULL,
	at              BIGINT  NOT NULL,
	status_code     INTEGER NOT NULL,
	error           TEXT    NOT NULL,
	next_attempt_at BIGINT
);
CREATE INDEX push_attempts_task ON push_attempts (task_id, at);
