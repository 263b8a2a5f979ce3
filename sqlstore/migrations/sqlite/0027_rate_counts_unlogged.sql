-- Nothing to change on SQLite: one instance counts in memory
-- (PostgreSQL's rate counts become unlogged in its migration of this name).
SELECT 1;
