-- Whether a member's account is enabled, read by discovery
-- (sqlstore.Discover) from this index alone once the table is vacuumed.
-- peer_usage gets no such index here: one on open_tasks would stop the
-- updates of every task write from being HOT.
CREATE INDEX accounts_gates ON accounts (id, disabled);
