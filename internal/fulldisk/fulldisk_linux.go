//go:build linux

package fulldisk

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes in a new temporary directory and
// unmounts it when the test ends. It skips the test when the process may
// not mount (not root, or no mount namespace of its own to do it in).
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk needs a tmpfs of its own, which only root may mount (CI runs as root)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+itoa(size)+",mode=0700"); err != nil {
		t.Skipf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return &Disk{Dir: dir, filler: filepath.Join(dir, "filler")}
}

// Fill writes the filler file until the disk has at most leave bytes free.
func (d *Disk) Fill(t testing.TB, leave int64) {
	t.Helper()
	f, err := os.OpenFile(d.filler, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for d.Free(t) > leave {
		if _, err := f.Write(chunk); err != nil {
			return // full already
		}
	}
}

// Free returns the bytes still free on the disk.
func (d *Disk) Free(t testing.TB) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.Dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// Empty removes the filler file: the room it took is free again.
func (d *Disk) Empty(t testing.TB) {
	t.Helper()
	if err := os.Remove(d.filler); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
