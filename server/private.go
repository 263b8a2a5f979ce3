package server

import (
	"io/fs"
	"log/slog"
	"os"
)

// warnIfShared warns when the data directory can be read or entered by
// users other than its owner: it holds the database (token hashes, the
// secrets the server must send later) and the operator's token file.
func warnIfShared(log *slog.Logger, dir string) {
	fi, err := os.Stat(dir)
	if err != nil {
		return
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		log.Warn("the data directory is open to other users; make it private with chmod 700",
			"dir", dir, "mode", fs.FileMode(perm).String())
	}
}
