-- What each peer holds open on each agent, for the per-peer quotas
-- (TaskChange.Quota, PeerUsage): how many unfinished tasks, and the bytes of
-- their A2A JSON (data). Every write of a task that changes them changes its
-- peer's row in the same transaction (sqlstore/task_usage.go), so that
-- checking a quota reads one row, however many tasks the peer holds, and
-- adds no index to tasks. counted_at is when the counts were last made
-- from the tasks themselves (Unix nanoseconds; 0: never since this
-- migration): instances of an older version write tasks without changing
-- the counts during an upgrade, so a count that would refuse a change is
-- made again from the tasks unless it was made within the last minute.
-- The list of states must stay the one in sqlstore.unfinishedStates.
CREATE TABLE peer_usage (
	agent_id   TEXT   NOT NULL,
	peer_id    TEXT   NOT NULL,
	open_tasks BIGINT NOT NULL,
	bytes      BIGINT NOT NULL,
	counted_at BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (agent_id, peer_id)
);
INSERT INTO peer_usage (agent_id, peer_id, open_tasks, bytes)
	SELECT agent_id, peer_id, COUNT(*), SUM(octet_length(data)) FROM tasks
	WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')
	GROUP BY agent_id, peer_id;
