package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.CertStore = (*DB)(nil)

// purposeCertFileColumn is the column of the certificate manager's private
// keys; each is sealed for its key (purposeCertFile), so that a sealed key
// moved to another row does not open.
const purposeCertFileColumn = "cert_files.sealed"

// purposeCertFile is the purpose a private key at key is sealed for.
func purposeCertFile(key string) string { return purposeCertFileColumn + ":" + key }

// PutCertFile implements switchboard.CertStore. A secret file's value is
// sealed into the sealed column, and its value column left empty.
func (db *DB) PutCertFile(ctx context.Context, f *switchboard.CertFile) error {
	if f.Key == "" {
		return switchboard.Errorf(switchboard.EINVALID, "a certificate file needs a key")
	}
	value, sealed := f.Value, ""
	if f.Secret {
		var err error
		if sealed, err = db.seal(purposeCertFile(f.Key), string(f.Value)); err != nil {
			return err
		}
		value = nil
	}
	if value == nil {
		value = []byte{}
	}
	f.Modified = db.Now().UTC()
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cert_files (key, value, sealed, size, modified_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, sealed = excluded.sealed, size = excluded.size, modified_at = excluded.modified_at`,
			f.Key, value, sealed, len(f.Value), nanos(f.Modified))
		return err
	})
}

// FindCertFile implements switchboard.CertStore.
func (db *DB) FindCertFile(ctx context.Context, key string) (*switchboard.CertFile, error) {
	f := &switchboard.CertFile{Key: key}
	var sealed string
	var modified int64
	err := db.read.QueryRowContext(ctx, `SELECT value, sealed, modified_at FROM cert_files WHERE key = $1`, key).
		Scan(&f.Value, &sealed, &modified)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no certificate file %s", key)
	} else if err != nil {
		return nil, db.formatError(err)
	}
	f.Modified = fromNanos(modified)
	if sealed != "" {
		plain, err := db.open(purposeCertFile(key), sealed)
		if err != nil {
			return nil, err
		}
		f.Value, f.Secret = []byte(plain), true
	}
	if f.Value == nil {
		f.Value = []byte{}
	}
	return f, nil
}

// underKey returns the bounds of the range of keys that holds key and the
// keys under key + "/": every key that begins with key and then a byte
// below '0' (which is '/' + 1). Keys compare byte by byte on both engines
// (PostgreSQL's column is COLLATE "C"), so the range is one search of the
// primary key; the few keys in it that begin otherwise ("a.example-x")
// are left out by the caller.
func underKey(key string) (from, to string) { return key, key + "0" }

// isUnder reports whether k is key or a key under key + "/".
func isUnder(k, key string) bool { return k == key || strings.HasPrefix(k, key+"/") }

// ListCertFiles implements switchboard.CertStore.
func (db *DB) ListCertFiles(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "a certificate file listing needs a prefix")
	}
	from, to := underKey(prefix)
	rows, err := db.read.QueryContext(ctx, `SELECT key FROM cert_files WHERE key >= $1 AND key < $2 ORDER BY key`, from, to)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		if isUnder(k, prefix) {
			keys = append(keys, k)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, db.formatError(err)
	}
	return keys, nil
}

// DeleteCertFiles implements switchboard.CertStore.
func (db *DB) DeleteCertFiles(ctx context.Context, key string) error {
	if key == "" {
		return switchboard.Errorf(switchboard.EINVALID, "a certificate file deletion needs a key")
	}
	from, to := underKey(key)
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM cert_files WHERE key >= $1 AND key < $2 AND (key = $1 OR substr(key, 1, length($3)) = $3)`,
			from, to, key+"/")
		return err
	})
}

// TryLockCert implements switchboard.CertStore: one statement takes a lock
// nobody holds, takes over an expired one, or extends the holder's own.
func (db *DB) TryLockCert(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	now := db.Now()
	var took bool
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO cert_locks (name, holder, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE cert_locks.expires_at <= $4 OR cert_locks.holder = excluded.holder`,
			name, holder, nanos(now.Add(ttl)), nanos(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		took = n == 1
		return err
	})
	return took, err
}

// RenewCertLock implements switchboard.CertStore. A holder whose lock
// expired renews it still, if nobody took it over meanwhile.
func (db *DB) RenewCertLock(ctx context.Context, name, holder string, ttl time.Duration) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cert_locks SET expires_at = $1 WHERE name = $2 AND holder = $3`,
			nanos(db.Now().Add(ttl)), name, holder)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return switchboard.Errorf(switchboard.ECONFLICT, "the lock %s is not held by %s any more", name, holder)
		}
		return nil
	})
}

// UnlockCert implements switchboard.CertStore.
func (db *DB) UnlockCert(ctx context.Context, name, holder string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM cert_locks WHERE name = $1 AND holder = $2`, name, holder)
		return err
	})
}
