-- Pairing (docs/pairing.md): who may approve a peer's request for a token
-- of the agent: human (its owner), agent (the owner or the agent) or off.
ALTER TABLE agents ADD COLUMN pairing TEXT NOT NULL DEFAULT 'human';

-- Peers' requests for a peer token (RFC 8628 device authorization). The
-- device code is stored as its SHA-256 only; the user code is shown on two
-- screens and is not a secret. A request is deleted when it is redeemed or
-- its denial reported, and a day after it expired otherwise.
CREATE TABLE pairings (
	device_hash    TEXT    PRIMARY KEY,
	user_code      TEXT    NOT NULL UNIQUE,
	agent_id       TEXT    NOT NULL,
	client_name    TEXT    NOT NULL,
	client_id      TEXT    NOT NULL,
	card_url       TEXT    NOT NULL,
	requester      TEXT    NOT NULL,
	status         TEXT    NOT NULL,
	label          TEXT    NOT NULL DEFAULT '',
	replaces_label TEXT    NOT NULL DEFAULT '',
	replaces_hash  TEXT    NOT NULL DEFAULT '',
	interval_ms    BIGINT  NOT NULL,
	last_poll_at   BIGINT,
	decided_by     TEXT    NOT NULL DEFAULT '',
	created_at     BIGINT  NOT NULL,
	expires_at     BIGINT  NOT NULL
);
-- An agent's requests by age (the limits, the owner's list).
CREATE INDEX pairings_agent ON pairings (agent_id, created_at);
-- Requests by the address they came from (flood control).
CREATE INDEX pairings_requester ON pairings (requester, created_at);
-- Expired requests are swept by expiry.
CREATE INDEX pairings_expiry ON pairings (expires_at);
