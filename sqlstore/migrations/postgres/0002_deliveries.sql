-- Live delivery: work on its way to connector and webhook agents.
ALTER TABLE agents ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN webhook_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN offered INTEGER NOT NULL DEFAULT 0;

CREATE TABLE deliveries (
	id              TEXT    PRIMARY KEY,
	task_id         TEXT    NOT NULL,
	agent_id        TEXT    NOT NULL,
	kind            TEXT    NOT NULL, -- task | message | cancel
	message_id      TEXT    NOT NULL DEFAULT '',
	state           TEXT    NOT NULL, -- queued | offered | acked | failed
	attempts        INTEGER NOT NULL DEFAULT 0,
	holder          TEXT    NOT NULL DEFAULT '',
	deadline        BIGINT  NOT NULL,
	next_attempt_at BIGINT  NOT NULL,
	last_error      TEXT    NOT NULL DEFAULT '',
	created_at      BIGINT  NOT NULL,
	offered_at      BIGINT
);
CREATE INDEX deliveries_agent_state ON deliveries (agent_id, state, created_at);
CREATE INDEX deliveries_task ON deliveries (task_id);
CREATE INDEX deliveries_state_deadline ON deliveries (state, deadline);
CREATE INDEX deliveries_holder ON deliveries (holder) WHERE state = 'offered';
