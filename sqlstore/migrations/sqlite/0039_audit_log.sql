-- The audit log (docs/operating.md, "Audit log"): every security-relevant
-- change, or attempt at one, with who acted, on what, when, from which
-- address and how it ended. No secret is ever stored here. account_id is
-- the account the entry belongs to (its owner reads it; empty: the
-- operator's only); it has no foreign key, so that entries outlive the
-- accounts and agents they name.
CREATE TABLE audit_log (
	id          TEXT   PRIMARY KEY,
	at          BIGINT NOT NULL,
	account_id  TEXT   NOT NULL,
	actor_kind  TEXT   NOT NULL,
	actor_id    TEXT   NOT NULL,
	action      TEXT   NOT NULL,
	target_kind TEXT   NOT NULL,
	target_id   TEXT   NOT NULL,
	outcome     TEXT   NOT NULL,
	client_addr TEXT   NOT NULL,
	detail      TEXT   NOT NULL
);
-- Listings run newest first, the operator's over all, an owner's over its
-- accounts; retention deletes by age.
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_account_at ON audit_log (account_id, at, id);
