-- One routed task with the fewest statements it can take, each its own
-- commit: the creation (task, first event, delivery), the claim of the
-- delivery, the answer (task finished, its event, the delivery acked).
\set a random(1, 100)
\set r random(1, 1000000000)
WITH ev AS (INSERT INTO pgb.events VALUES ('t' || :client_id || '-' || :r || '-' || txid_current(), 1, repeat('x', 1300)) RETURNING task_id),
	d AS (INSERT INTO pgb.deliveries SELECT task_id || 'd', task_id, 'agent' || :a, 'queued', '', extract(epoch FROM now())::bigint FROM ev RETURNING task_id)
INSERT INTO pgb.tasks SELECT task_id, 'agent' || :a, 'peer', 'SUBMITTED', 1, 0, 0, repeat('y', 1300) FROM d;
UPDATE pgb.deliveries SET state = 'offered', holder = 'h' WHERE id = (SELECT id FROM pgb.deliveries
	WHERE agent_id = 'agent' || :a AND state = 'queued' ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED);
WITH t AS (SELECT id FROM pgb.tasks WHERE agent_id = 'agent' || :a AND state = 'SUBMITTED' LIMIT 1 FOR UPDATE SKIP LOCKED),
	ack AS (UPDATE pgb.deliveries SET state = 'acked' WHERE task_id = (SELECT id FROM t)),
	ev AS (INSERT INTO pgb.events SELECT id, 2, repeat('z', 1300) FROM t)
UPDATE pgb.tasks SET state = 'COMPLETED', seq = 2, data = repeat('w', 2400) WHERE id = (SELECT id FROM t);
