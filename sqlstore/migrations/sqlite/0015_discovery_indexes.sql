-- Whether a member's account is enabled, read by discovery
-- (sqlstore.Discover) from this index alone: SQLite otherwise searches the
-- primary key's index and then the table for each member.
CREATE INDEX accounts_gates ON accounts (id, disabled);
