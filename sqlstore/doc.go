// Package sqlstore implements the Switchboard store interfaces on
// database/sql: SQLite (modernc.org/sqlite, pure Go) for a single instance,
// PostgreSQL (pgx) for several instances sharing one database. The SQL text
// is shared between engines; what differs lives in a dialect value (row
// locks, unique-violation errors, the migration lock) and in the per-engine
// migration directories under migrations/.
//
// Every exported method is one transaction. Unexported helpers take the
// transaction, so that an operation spanning several tables (a task, its
// first event and its message id) commits or fails as a whole.
package sqlstore
