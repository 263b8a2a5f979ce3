-- Finished tasks by the time they finished, for retention (ExpireTasks):
-- finding the oldest finished tasks reads this index alone. The list must
-- stay the one in sqlstore.finishedStates, which the query repeats so that
-- the planner can use the index.
CREATE INDEX tasks_finished ON tasks (status_at, id)
	WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED');
