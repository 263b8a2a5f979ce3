-- Unfinished tasks by state, for the task gauges of /metrics: counting them
-- reads this index alone, however many finished tasks the table holds. The
-- list must stay the one in sqlstore.unfinishedStates, which the query
-- repeats so that the planner can use the index.
CREATE INDEX tasks_unfinished ON tasks (state)
	WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED');
