// Package backup makes and restores physical backups of a SQLite
// deployment while it serves: one file, a tar archive, that holds a
// consistent copy of the database (sqlstore.BackupSQLite, SQLite's VACUUM
// INTO: never a copy of the live file), the key file that opens the
// secrets sealed in it (secret.key: the backup is as secret as the key),
// and the data directory's other small files the caller names (the
// operator's owner token file), after a manifest that says what is in it.
//
// Restore writes such a file into a data directory that no server has
// open (sqlstore.LockSQLite), replacing a database only when told to,
// through files renamed into place: a database is either the old one or
// the restored one, never a mix. Export and import (package sqlstore)
// stay the logical path, across engines and versions; PostgreSQL is backed
// up with its own tools (docs/operating.md).
package backup
