package sqlstore

import (
	"context"
	"database/sql"

	"github.com/switchboard-dev/switchboard"
)

const accountColumns = `id, name, role, disabled, created_at, updated_at`

// CreateAccount implements switchboard.AccountStore.
func (db *DB) CreateAccount(ctx context.Context, a *switchboard.Account) error {
	now := db.Now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			a.ID, a.Name, string(a.Role), boolInt(a.Disabled), nanos(now), nanos(now))
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "an account named %q already exists", a.Name)
		}
		return err
	})
}

// FindAccountByID implements switchboard.AccountStore.
func (db *DB) FindAccountByID(ctx context.Context, id string) (*switchboard.Account, error) {
	a, err := scanAccount(db.read.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "account not found")
	}
	return a, db.formatError(err)
}

// FindAccounts implements switchboard.AccountStore.
func (db *DB) FindAccounts(ctx context.Context) ([]*switchboard.Account, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY created_at, id`)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Account
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// UpdateAccount implements switchboard.AccountStore.
func (db *DB) UpdateAccount(ctx context.Context, id string, upd switchboard.AccountUpdate) (*switchboard.Account, error) {
	var out *switchboard.Account
	err := db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		a, err := scanAccount(tx.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`+db.forUpdate(""), id))
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "account not found")
		} else if err != nil {
			return err
		}
		if upd.Name != nil {
			a.Name = *upd.Name
		}
		if upd.Disabled != nil {
			a.Disabled = *upd.Disabled
		}
		a.UpdatedAt = db.Now().UTC()
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET name = $1, disabled = $2, updated_at = $3 WHERE id = $4`,
			a.Name, boolInt(a.Disabled), nanos(a.UpdatedAt), a.ID)
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "an account named %q already exists", a.Name)
		}
		out = a
		return err
	})
	return out, err
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

func scanAccount(s scanner) (*switchboard.Account, error) {
	var a switchboard.Account
	var role string
	var disabled int
	var created, updated int64
	if err := s.Scan(&a.ID, &a.Name, &role, &disabled, &created, &updated); err != nil {
		return nil, err
	}
	a.Role = switchboard.Role(role)
	a.Disabled = disabled != 0
	a.CreatedAt, a.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &a, nil
}
