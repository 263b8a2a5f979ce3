-- Several instances on one database.

-- The live connection of each connector agent: which connection (holder)
-- on which instance, until when (renewed while the agent answers pings).
CREATE TABLE agent_sessions (
	agent_id     TEXT   PRIMARY KEY,
	holder       TEXT   NOT NULL,
	instance_id  TEXT   NOT NULL,
	client       TEXT   NOT NULL DEFAULT '',
	connected_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL
);

-- Requests per key in fixed windows, shared by every instance.
CREATE TABLE rate_counts (
	key          TEXT    NOT NULL,
	window_start BIGINT  NOT NULL,
	count        INTEGER NOT NULL,
	PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_counts_window ON rate_counts (window_start);
