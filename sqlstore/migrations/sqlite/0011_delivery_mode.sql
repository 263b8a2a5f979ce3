-- The mode of the agent a delivery goes to, kept with the delivery, so that
-- a dispatcher (webhook agents) finds the work due for its mode in an index
-- of its own, however many agents and queued deliveries the deployment has.
-- A connector's deliveries never enter that index: their claims go by
-- agent. The live deliveries get their agent's mode here; one written
-- without it later ('': by an older version during an upgrade, or imported
-- from an older export) is given it by a dispatcher's claim within a second.
ALTER TABLE deliveries ADD COLUMN mode TEXT NOT NULL DEFAULT '';
UPDATE deliveries SET mode = COALESCE((SELECT a.mode FROM agents a WHERE a.id = deliveries.agent_id), '')
	WHERE state IN ('queued', 'offered');
CREATE INDEX deliveries_dispatch ON deliveries (mode, next_attempt_at) WHERE state = 'queued' AND mode <> 'connector';
