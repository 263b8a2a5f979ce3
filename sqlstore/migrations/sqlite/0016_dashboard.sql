-- The web console's sign-ins (docs/dashboard.md): the hash of each
-- cookie's secret, the account, the owner token it was opened with (the
-- sign-in lasts while that token is active) and the forms' CSRF token.
CREATE TABLE signins (
	hash       TEXT   PRIMARY KEY,
	account_id TEXT   NOT NULL,
	token_hash TEXT   NOT NULL,
	csrf       TEXT   NOT NULL,
	created_at BIGINT NOT NULL,
	seen_at    BIGINT NOT NULL
);
-- Idle sign-ins are forgotten by when they were last seen.
CREATE INDEX signins_seen ON signins (seen_at);
