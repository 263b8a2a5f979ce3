-- Each instance renews the sessions of its connections by holder, 500 at a
-- time, every heartbeat: without this index each of those statements read
-- every session of the deployment, work that grew with the square of the
-- agents connected.
CREATE INDEX agent_sessions_holder ON agent_sessions (holder);
