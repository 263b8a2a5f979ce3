-- What a front records of its peers' tasks (docs/front.md, "Pass-through
-- fronts"): 'task' keeps a durable record of every task, 'none' passes the
-- calls through with the ids mapped in memory.
ALTER TABLE fronts ADD COLUMN record TEXT NOT NULL DEFAULT 'task';
