package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the name of the file, in the data directory, that a server
// keeping its data there (SQLite) holds locked while it runs.
const LockFile = "switchboard.lock"

// errDataDirBusy is what a start finds when another process holds the
// data directory's lock.
var errDataDirBusy = errors.New("data directory in use")

// lockDataDir takes the lock of dir for this process: a second server on
// one SQLite database would keep its own in-process bus, so that the
// agents connected to one would never hear of the work the other stores
// for them. The lock is the kernel's (flock), so a process that dies,
// even by kill -9, leaves none behind. It returns the open lock file,
// whose closing releases the lock.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	if err := flock(f); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, errDataDirBusy) {
			pid := strings.TrimSpace(string(holder))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("another switchboard (pid %s) serves the data directory %s: stop it first, or give this one its own --data; several instances share one deployment on PostgreSQL and NATS (docs/operating.md)", pid, dir)
		}
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	// The holder's pid, for the message above; the lock is what counts.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
