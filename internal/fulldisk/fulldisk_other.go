//go:build !linux

package fulldisk

import "testing"

// Mount skips the test: only Linux mounts a tmpfs for it here.
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	t.Skip("a full disk needs a tmpfs of its own, mounted on Linux")
	return nil
}

// Fill does nothing here.
func (d *Disk) Fill(t testing.TB, leave int64) {}

// Free returns 0 here.
func (d *Disk) Free(t testing.TB) int64 { return 0 }

// Empty does nothing here.
func (d *Disk) Empty(t testing.TB) {}
