-- The dispatchers of webhook (and other server-driven) agents claim their
-- work every second, starting from the agents in their mode: without this
-- index each claim read every agent of the deployment.
CREATE INDEX agents_mode ON agents (mode);
