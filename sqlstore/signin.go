package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/switchboard-dev/switchboard"
)

const signInColumns = `hash, account_id, token_hash, csrf, created_at, seen_at`

// CreateSignIn implements switchboard.SignInStore.
func (db *DB) CreateSignIn(ctx context.Context, s *switchboard.SignIn) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO signins (`+signInColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			s.Hash, s.AccountID, s.TokenHash, s.CSRF, nanos(s.CreatedAt), nanos(s.SeenAt))
		return err
	})
}

// FindSignIn implements switchboard.SignInStore.
func (db *DB) FindSignIn(ctx context.Context, hash string, seenSince, createdSince time.Time) (*switchboard.SignIn, error) {
	var s switchboard.SignIn
	var created, seen int64
	err := db.read.QueryRowContext(ctx, `SELECT `+signInColumns+` FROM signins WHERE hash = $1 AND seen_at >= $2 AND created_at >= $3`,
		hash, nanos(seenSince), nanos(createdSince)).Scan(&s.Hash, &s.AccountID, &s.TokenHash, &s.CSRF, &created, &seen)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "sign-in not found")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	s.CreatedAt, s.SeenAt = fromNanos(created), fromNanos(seen)
	return &s, nil
}

// TouchSignIn implements switchboard.SignInStore.
func (db *DB) TouchSignIn(ctx context.Context, hash string, at time.Time) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE signins SET seen_at = $1 WHERE hash = $2 AND seen_at < $1`, nanos(at), hash)
		return err
	})
}

// DeleteSignIn implements switchboard.SignInStore.
func (db *DB) DeleteSignIn(ctx context.Context, hash string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM signins WHERE hash = $1`, hash)
		return err
	})
}

// DeleteSignIns implements switchboard.SignInStore.
func (db *DB) DeleteSignIns(ctx context.Context, seenBefore, createdBefore time.Time) (int, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM signins WHERE seen_at < $1 OR created_at < $2`,
			nanos(seenBefore), nanos(createdBefore))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
