-- Every pairing request taken, for the flood limits (an agent's requests in
-- an hour, an address's in its window). They were counted from pairings,
-- whose rows a denial or a redemption deletes, so that a requester that
-- denied its own requests on the open /device page could make as many as
-- it liked. A row is kept a day, then swept with the expired requests.
CREATE TABLE pairing_counts (
	agent_id   TEXT   NOT NULL,
	requester  TEXT   NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX pairing_counts_agent ON pairing_counts (agent_id, created_at);
CREATE INDEX pairing_counts_requester ON pairing_counts (requester, created_at);
-- Counts older than a day are swept by age.
CREATE INDEX pairing_counts_created ON pairing_counts (created_at);
