-- The floor of a routed task on PostgreSQL (docs/performance.md): tables
-- shaped like Switchboard's (a task row and its two agent indexes, events,
-- deliveries and their indexes), in a schema of their own.
--   psql -h 127.0.0.1 -U postgres -d test -f setup.sql
--   pgbench -h 127.0.0.1 -U postgres -n -f task.sql -c 32 -j 2 -T 10 test
--   psql -h 127.0.0.1 -U postgres -d test -c 'DROP SCHEMA pgb CASCADE'
DROP SCHEMA IF EXISTS pgb CASCADE;
CREATE SCHEMA pgb;
CREATE TABLE pgb.tasks (id text PRIMARY KEY, agent_id text NOT NULL, peer_id text NOT NULL, state text NOT NULL,
	seq bigint NOT NULL, status_at bigint NOT NULL, created_at bigint NOT NULL, data text NOT NULL);
CREATE INDEX ON pgb.tasks (agent_id, peer_id, status_at, id);
CREATE INDEX ON pgb.tasks (agent_id, state, created_at);
CREATE TABLE pgb.events (task_id text NOT NULL, seq bigint NOT NULL, data text NOT NULL, PRIMARY KEY (task_id, seq));
CREATE TABLE pgb.deliveries (id text PRIMARY KEY, task_id text NOT NULL, agent_id text NOT NULL, state text NOT NULL,
	holder text NOT NULL DEFAULT '', created_at bigint NOT NULL);
CREATE INDEX ON pgb.deliveries (agent_id, state, created_at);
CREATE INDEX ON pgb.deliveries (task_id);
