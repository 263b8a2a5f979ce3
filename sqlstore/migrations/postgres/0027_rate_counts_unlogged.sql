-- Rate counts are written on every counted request and matter only for the
-- current minute: unlogged, a count costs no WAL and no flush at commit. A
-- crash (or a failover to a standby) forgets the counts, which gives every
-- client a fresh window once.
ALTER TABLE rate_counts SET UNLOGGED;
