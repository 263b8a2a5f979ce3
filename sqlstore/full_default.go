//go:build !unix

package sqlstore

// freeSpace reports that the free space of dir is unknown here: a SQLite
// I/O error is then not taken for a full disk, only SQLITE_FULL is.
func freeSpace(dir string) (int64, bool) { return 0, false }
