-- A sign-in lasts at most a lifetime from when it began (docs/dashboard.md):
-- the old are forgotten by when they were created, as the idle by when they
-- were last seen.
CREATE INDEX signins_created ON signins (created_at);
