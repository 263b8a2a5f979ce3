-- The agent card a connector forwarding to an A2A server published for its
-- agent (switchboard connect --forward): that server's card, raw, and its
-- URL. The address serves it scrubbed (docs/front.md).
CREATE TABLE published_cards (
	agent_id   TEXT   PRIMARY KEY,
	target     TEXT   NOT NULL,
	card       TEXT   NOT NULL,
	updated_at BIGINT NOT NULL
);
