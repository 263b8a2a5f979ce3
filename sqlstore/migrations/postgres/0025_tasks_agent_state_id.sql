-- An inbox page reads an agent's tasks of one state in (created_at, id)
-- order and stops at its limit: with id in the index, that order is the
-- index's, so the read stops there instead of sorting every task of the
-- state (PostgreSQL read and sorted all 1,000 of a busy agent's).
DROP INDEX tasks_agent_state;
CREATE INDEX tasks_agent_state ON tasks (agent_id, state, created_at, id);
