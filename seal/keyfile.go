package seal

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyFileName is the name of the key file in the data directory.
const KeyFileName = "secret.key"

// ParseKeys reads keys written as base64 (standard or URL alphabet, padded
// or not), one per line or separated by commas, the current one first.
// Blank lines and lines starting with '#' are skipped.
func ParseKeys(text string) ([][]byte, error) {
	var keys [][]byte
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range strings.Split(line, ",") {
			f = strings.TrimRight(strings.TrimSpace(f), "=")
			if f == "" {
				continue
			}
			key, err := base64.RawStdEncoding.DecodeString(f)
			if err != nil {
				key, err = base64.RawURLEncoding.DecodeString(f)
			}
			if err != nil || len(key) != KeySize {
				return nil, fmt.Errorf("seal: key %d is not %d bytes of base64", len(keys)+1, KeySize)
			}
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("seal: no key")
	}
	return keys, nil
}

// FormatKeys writes keys as ParseKeys reads them, one per line, with a
// comment that says what the file is.
func FormatKeys(keys [][]byte) string {
	var b strings.Builder
	b.WriteString("# Switchboard's secret keys: the first seals, the others only open what they sealed.\n")
	b.WriteString("# Keep this file mode 0600, and give every instance of a deployment the same keys.\n")
	for _, k := range keys {
		b.WriteString(base64.StdEncoding.EncodeToString(k))
		b.WriteByte('\n')
	}
	return b.String()
}

// KeyFile is what LoadKeyFile found.
type KeyFile struct {
	Keys [][]byte
	// Created is set when the file did not exist and was made.
	Created bool
	// FixedMode is set when the file was readable by others and its mode
	// was set to 0600.
	FixedMode fs.FileMode
}

// LoadKeyFile reads the keys in path, making the file with a new key (mode
// 0600) when it does not exist. A file that others may read is made 0600
// (and FixedMode says what it was).
func LoadKeyFile(path string) (*KeyFile, error) {
	kf, err := ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		keys := [][]byte{NewKey()}
		if err := WriteKeyFile(path, keys); err != nil {
			return nil, err
		}
		return &KeyFile{Keys: keys, Created: true}, nil
	}
	return kf, err
}

// WriteKeyFile writes keys to a new key file at path, mode 0600, replacing
// whatever was there.
func WriteKeyFile(path string, keys [][]byte) error {
	return writePrivate(path, FormatKeys(keys))
}

// ReadKeyFile reads the keys in path; a missing file is an error that
// wraps fs.ErrNotExist, and nothing is made. A file that others may read
// is made 0600 (and FixedMode says what it was).
func ReadKeyFile(path string) (*KeyFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("seal: no key file at %s: %w", path, err)
	} else if err != nil {
		return nil, fmt.Errorf("seal: read key file: %w", err)
	}
	keys, err := ParseKeys(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	kf := &KeyFile{Keys: keys}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("seal: the key file %s is open to other users and cannot be made private: %w", path, err)
		}
		kf.FixedMode = fi.Mode().Perm()
	}
	return kf, nil
}

// RotateKeyFile puts a new current key at the top of the key file in path,
// keeping the others to open what they sealed, and returns the new key's
// id. The file is replaced by a new one, mode 0600.
func RotateKeyFile(path string) (string, error) {
	kf, err := LoadKeyFile(path)
	if err != nil {
		return "", err
	}
	key := NewKey()
	if err := writePrivate(path, FormatKeys(append([][]byte{key}, kf.Keys...))); err != nil {
		return "", err
	}
	return KeyID(key), nil
}

// writePrivate writes data to a new file of mode 0600 renamed over path,
// so that it is never readable by others, and a file or a symlink already
// at path is replaced, never written through.
func writePrivate(path, data string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename, nothing is left to remove
	if err = f.Chmod(0o600); err == nil {
		_, err = f.WriteString(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("seal: write key file: %w", err)
	}
	return nil
}
