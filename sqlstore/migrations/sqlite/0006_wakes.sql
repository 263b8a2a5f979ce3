-- Wake webhooks: each agent's configuration, the durable queue of wakes
-- (one pending wake per agent, conversation and kind, which later messages
-- merge into), the tasks each wake names, and the hourly counts of the cap.
-- named_task_id is a task of ours for inbound wakes and the remote agent's
-- task for outbound updates, so retention does not take it for ours.
CREATE TABLE wake_configs (
	agent_id          TEXT    PRIMARY KEY,
	url               TEXT    NOT NULL,
	wake_key          TEXT    NOT NULL DEFAULT '',
	hmac_secret       TEXT    NOT NULL DEFAULT '',
	preset            TEXT    NOT NULL,
	debounce_ms       BIGINT  NOT NULL,
	max_per_hour      INTEGER NOT NULL DEFAULT 0,
	key_header        TEXT    NOT NULL DEFAULT '',
	key_prefix        TEXT    NOT NULL DEFAULT '',
	body_template     TEXT    NOT NULL DEFAULT '',
	openclaw_agent_id TEXT    NOT NULL DEFAULT '',
	cli_command       TEXT    NOT NULL DEFAULT '',
	created_at        BIGINT  NOT NULL,
	updated_at        BIGINT  NOT NULL
);

CREATE TABLE wakes (
	id          TEXT    PRIMARY KEY,
	agent_id    TEXT    NOT NULL,
	context_id  TEXT    NOT NULL,
	kind        TEXT    NOT NULL, -- inbound | outbound_update
	named_task_id     TEXT    NOT NULL DEFAULT '',
	sender      TEXT    NOT NULL DEFAULT '',
	preview     TEXT    NOT NULL DEFAULT '',
	count       INTEGER NOT NULL DEFAULT 1,
	state       TEXT    NOT NULL, -- pending | sending | sent | failed | dropped
	retries     INTEGER NOT NULL DEFAULT 0,
	due_at      BIGINT  NOT NULL,
	holder      TEXT    NOT NULL DEFAULT '',
	lease_until BIGINT  NOT NULL DEFAULT 0,
	last_status INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT    NOT NULL DEFAULT '',
	created_at  BIGINT  NOT NULL,
	updated_at  BIGINT  NOT NULL
);
CREATE UNIQUE INDEX wakes_pending ON wakes (agent_id, context_id, kind) WHERE state = 'pending';
CREATE INDEX wakes_due ON wakes (state, due_at);
CREATE INDEX wakes_agent ON wakes (agent_id, created_at);

CREATE TABLE wake_tasks (
	wake_id  TEXT   NOT NULL,
	named_task_id  TEXT   NOT NULL,
	added_at BIGINT NOT NULL,
	PRIMARY KEY (wake_id, named_task_id)
);

CREATE TABLE wake_budget (
	agent_id TEXT    NOT NULL,
	hour     BIGINT  NOT NULL, -- Unix time / 3600
	count    INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (agent_id, hour)
);
