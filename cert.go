package switchboard

import (
	"context"
	"time"
)

// CertFile is one file of the server's certificate manager (package
// certs): a certificate, its metadata, a private key, the ACME account.
// Keys are paths with "/" between their parts, without a leading or
// trailing "/"; a key's "directories" are the paths that lead to it.
type CertFile struct {
	Key   string
	Value []byte
	// Secret marks a private key: the store keeps its value sealed at
	// rest, like every other secret it keeps.
	Secret bool
	// Modified is when the file was last stored (set by PutCertFile).
	Modified time.Time
}

// CertStore keeps the certificate manager's files and its locks, so that
// every instance of a deployment serves the same certificates and only
// one of them asks the CA for each.
type CertStore interface {
	// PutCertFile stores f, replacing the file at its key; it sets
	// f.Modified.
	PutCertFile(ctx context.Context, f *CertFile) error

	// FindCertFile returns the file at key, or ENOTFOUND.
	FindCertFile(ctx context.Context, key string) (*CertFile, error)

	// ListCertFiles returns the keys of the files at prefix or under
	// prefix + "/", in byte order. The prefix must not be empty
	// (EINVALID): a listing reads one range of keys, never them all.
	ListCertFiles(ctx context.Context, prefix string) ([]string, error)

	// DeleteCertFiles deletes the file at key and every file under
	// key + "/". Deleting nothing is not an error; the key must not be
	// empty (EINVALID).
	DeleteCertFiles(ctx context.Context, key string) error

	// TryLockCert takes the lock name for holder until ttl from now, and
	// reports whether it did: it does when nobody holds it, when its
	// holder let it expire, or when holder holds it already.
	TryLockCert(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)

	// RenewCertLock moves the expiry of the lock name that holder holds
	// to ttl from now. It returns ECONFLICT when holder does not hold it
	// (any more: it expired and another took it over).
	RenewCertLock(ctx context.Context, name, holder string, ttl time.Duration) error

	// UnlockCert releases the lock name if holder holds it; releasing a
	// lock one does not hold is not an error.
	UnlockCert(ctx context.Context, name, holder string) error
}
