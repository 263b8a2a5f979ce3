package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.OAuthStore = (*DB)(nil)

const (
	oauthClientColumns = `id, name, redirect_uris, application_type, requester, created_at`
	oauthCodeColumns   = `hash, client_id, redirect_uri, challenge, resource, account_id, agent_id, agents, label, created_at, expires_at, client_name`
	oauthGrantColumns  = `refresh_hash, access_hash, client_id, account_id, agent_id, agents, label, created_at, client_name, rotated_at, code_hash`
)

// unusedOAuthClient is the condition on a client row u that it is unused:
// it holds no grant and no authorization code (no owner consented).
const unusedOAuthClient = `NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = u.id)
	AND NOT EXISTS (SELECT 1 FROM oauth_codes k WHERE k.client_id = u.id)`

// CreateOAuthClient implements switchboard.OAuthStore. The counts are
// read, and room is made, in the transaction that inserts, while it
// holds PostgreSQL's advisory lock of registrations: instances that
// register at once take turns and keep the bounds
// (internal/storetest OAuthClientLimitsConcurrent).
func (db *DB) CreateOAuthClient(ctx context.Context, c *switchboard.OAuthClient, lim switchboard.OAuthClientLimits) error {
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// The limits count every client of the deployment: registrations
		// take turns (SQLite's writer already makes them).
		if db.dialect.rowLocks {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, oauthClientsLockKey); err != nil {
				return err
			}
		}
		if lim.PerRequester > 0 {
			if err := db.countOAuthRegistration(ctx, tx, c, lim); err != nil {
				return err
			}
		}
		if lim.MaxClients > 0 {
			if err := db.pruneOAuthClients(ctx, tx, c.Requester, lim); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO oauth_clients (`+oauthClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			c.ID, c.Name, string(uris), c.ApplicationType, c.Requester, nanos(c.CreatedAt))
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "the client id is taken")
		}
		return err
	})
}

// countOAuthRegistration counts c's registration against its address in
// oauth_client_counts, which outlives the clients pruned to make room,
// after sweeping the counts older than the window; ERATELIMITED when the
// address made lim.PerRequester registrations in the window already.
func (db *DB) countOAuthRegistration(ctx context.Context, tx *sql.Tx, c *switchboard.OAuthClient, lim switchboard.OAuthClientLimits) error {
	since := nanos(c.CreatedAt.Add(-lim.Window))
	if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_client_counts WHERE created_at <= $1`, since); err != nil {
		return err
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_client_counts WHERE requester = $1 AND created_at > $2`,
		c.Requester, since).Scan(&n)
	if err != nil {
		return err
	}
	if n >= lim.PerRequester {
		return switchboard.Errorf(switchboard.ERATELIMITED, "too many client registrations from your address")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO oauth_client_counts (requester, created_at) VALUES ($1, $2)`, c.Requester, nanos(c.CreatedAt))
	return err
}

// pruneOAuthClients makes room for one more client, of requester: when
// lim.MaxClients are stored, it deletes those registered before
// lim.PruneBefore that hold no grant and those registered before
// lim.UnusedBefore that are unused; if that is not enough, the oldest
// unused client of the address that holds the most clients, if it holds
// more than requester does. EQUOTA when none can go.
func (db *DB) pruneOAuthClients(ctx context.Context, tx *sql.Tx, requester string, lim switchboard.OAuthClientLimits) error {
	full := func() (bool, error) {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_clients`).Scan(&n)
		return n >= lim.MaxClients, err
	}
	if ok, err := full(); !ok || err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE id IN (SELECT u.id FROM oauth_clients u
		WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = u.id)
		AND (u.created_at < $1 OR (u.created_at < $2 AND `+unusedOAuthClient+`)))`,
		nanosOrNever(lim.PruneBefore), nanosOrNever(lim.UnusedBefore))
	if err != nil {
		return err
	}
	if ok, err := full(); !ok || err != nil {
		return err
	}
	// Still full: the address holding the most clients gives up its
	// oldest unused one, so that a few addresses, each within its own
	// limit, cannot keep every other out.
	var mine, held int
	var heaviest string
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_clients WHERE requester = $1`, requester).Scan(&mine); err != nil {
		return err
	}
	err = tx.QueryRowContext(ctx, `SELECT requester, COUNT(*) FROM oauth_clients
		WHERE requester IN (SELECT u.requester FROM oauth_clients u WHERE `+unusedOAuthClient+`)
		GROUP BY requester ORDER BY COUNT(*) DESC, MIN(created_at), requester LIMIT 1`).Scan(&heaviest, &held)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	if err == sql.ErrNoRows || held <= mine {
		return switchboard.Errorf(switchboard.EQUOTA, "no more clients can be registered now")
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE id = (SELECT u.id FROM oauth_clients u
		WHERE u.requester = $1 AND `+unusedOAuthClient+` ORDER BY u.created_at, u.id LIMIT 1)`, heaviest)
	return err
}

// nanosOrNever is nanos(t) as the bound "registered before t", or, for
// the zero time (no such bound), a bound no row is before.
func nanosOrNever(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return nanos(t)
}

// FindOAuthClient implements switchboard.OAuthStore.
func (db *DB) FindOAuthClient(ctx context.Context, id string) (*switchboard.OAuthClient, error) {
	var c switchboard.OAuthClient
	var uris string
	var created int64
	err := db.read.QueryRowContext(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = $1`, id).
		Scan(&c.ID, &c.Name, &uris, &c.ApplicationType, &c.Requester, &created)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "unknown client")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, err
	}
	c.CreatedAt = fromNanos(created)
	return &c, nil
}

// CreateOAuthCode implements switchboard.OAuthStore.
func (db *DB) CreateOAuthCode(ctx context.Context, c *switchboard.OAuthCode) error {
	agents, err := json.Marshal(nonNilStrings(c.Target.Agents))
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO oauth_codes (`+oauthCodeColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			c.Hash, c.ClientID, c.RedirectURI, c.Challenge, c.Resource, c.Target.AccountID, c.Target.AgentID,
			string(agents), c.Label, nanos(c.CreatedAt), nanos(c.ExpiresAt), c.ClientName)
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "the code is taken")
		}
		return err
	})
}

// TakeOAuthCode implements switchboard.OAuthStore. The first take marks
// the code used (a compare-and-swap on used_at); a later one marks it
// replayed and answers ECONFLICT, in a transaction that commits the mark.
func (db *DB) TakeOAuthCode(ctx context.Context, hash string) (*switchboard.OAuthCode, error) {
	var out *switchboard.OAuthCode
	replayed := false
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var c switchboard.OAuthCode
		var agents string
		var created, expires int64
		err := tx.QueryRowContext(ctx, `SELECT `+oauthCodeColumns+` FROM oauth_codes WHERE hash = $1`+db.forUpdate(""), hash).
			Scan(&c.Hash, &c.ClientID, &c.RedirectURI, &c.Challenge, &c.Resource, &c.Target.AccountID, &c.Target.AgentID,
				&agents, &c.Label, &created, &expires, &c.ClientName)
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "unknown authorization code")
		} else if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(agents), &c.Target.Agents); err != nil {
			return err
		}
		c.CreatedAt, c.ExpiresAt = fromNanos(created), fromNanos(expires)
		out = &c
		now := nanos(db.Now().UTC())
		res, err := tx.ExecContext(ctx, `UPDATE oauth_codes SET used_at = $1 WHERE hash = $2 AND used_at = 0`, now, hash)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		replayed = true
		_, err = tx.ExecContext(ctx, `UPDATE oauth_codes SET replayed_at = $1 WHERE hash = $2`, now, hash)
		return err
	})
	if err == nil && replayed {
		err = switchboard.Errorf(switchboard.ECONFLICT, "the authorization code was used already")
	}
	return out, err
}

// DeleteOAuthCodes implements switchboard.OAuthStore.
func (db *DB) DeleteOAuthCodes(ctx context.Context, expiredBefore time.Time) (int, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM oauth_codes WHERE expires_at < $1`, nanos(expiredBefore))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// CreateOAuthGrant implements switchboard.OAuthStore.
func (db *DB) CreateOAuthGrant(ctx context.Context, g *switchboard.OAuthGrant) error {
	agents, err := json.Marshal(nonNilStrings(g.Target.Agents))
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if g.CodeHash != "" {
			var replayed int64
			err := tx.QueryRowContext(ctx, `SELECT replayed_at FROM oauth_codes WHERE hash = $1`+db.forUpdate(""), g.CodeHash).Scan(&replayed)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			if replayed != 0 {
				return switchboard.Errorf(switchboard.ECONFLICT, "the authorization code was used again")
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO oauth_grants (`+oauthGrantColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10)`,
			g.RefreshHash, g.AccessHash, g.ClientID, g.Target.AccountID, g.Target.AgentID, string(agents), g.Label, nanos(g.CreatedAt), g.ClientName, g.CodeHash)
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "the grant exists")
		}
		return err
	})
}

// RotateOAuthGrant implements switchboard.OAuthStore.
func (db *DB) RotateOAuthGrant(ctx context.Context, oldRefresh, newRefresh, newAccess string) (*switchboard.OAuthGrant, error) {
	var out *switchboard.OAuthGrant
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		g, err := db.findOAuthGrant(ctx, tx, `refresh_hash = $1`, oldRefresh)
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND && oldRefresh != "" {
			// A refresh token used again after its rotation: its grant.
			used, uerr := db.findOAuthGrant(ctx, tx, `previous_refresh_hash = $1`, oldRefresh)
			if uerr == nil {
				out = used
				return switchboard.Errorf(switchboard.ECONFLICT, "the refresh token was used already")
			} else if switchboard.ErrorCode(uerr) != switchboard.ENOTFOUND {
				return uerr
			}
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE oauth_grants SET refresh_hash = $1, access_hash = $2, previous_refresh_hash = $3, rotated_at = $4
			WHERE refresh_hash = $3`, newRefresh, newAccess, oldRefresh, nanos(db.Now().UTC()))
		if err != nil {
			return err
		}
		if err := changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "unknown or used refresh token")); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// DeleteOAuthGrant implements switchboard.OAuthStore.
func (db *DB) DeleteOAuthGrant(ctx context.Context, hash string) (*switchboard.OAuthGrant, error) {
	var out *switchboard.OAuthGrant
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		g, err := db.findOAuthGrant(ctx, tx, `refresh_hash = $1 OR access_hash = $1`, hash)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_grants WHERE refresh_hash = $1`, g.RefreshHash); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// DeleteOAuthGrantOfCode implements switchboard.OAuthStore.
func (db *DB) DeleteOAuthGrantOfCode(ctx context.Context, codeHash string) (*switchboard.OAuthGrant, error) {
	if codeHash == "" { // grants made before their code was recorded
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no grant of that code")
	}
	var out *switchboard.OAuthGrant
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		g, err := db.findOAuthGrant(ctx, tx, `code_hash = $1`, codeHash)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_grants WHERE refresh_hash = $1`, g.RefreshHash); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// FindOAuthGrants implements switchboard.OAuthStore.
func (db *DB) FindOAuthGrants(ctx context.Context, f switchboard.OAuthGrantFilter) ([]*switchboard.OAuthGrant, error) {
	q, args := `SELECT `+oauthGrantColumns+` FROM oauth_grants`, []any{}
	if f.AccountID != nil {
		q, args = q+` WHERE account_id = $1`, append(args, *f.AccountID)
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY created_at, refresh_hash`, args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.OAuthGrant
	for rows.Next() {
		g, err := scanOAuthGrant(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// findOAuthGrant reads, locking it, the grant that matches cond (with
// arg as $1).
func (db *DB) findOAuthGrant(ctx context.Context, tx *sql.Tx, cond, arg string) (*switchboard.OAuthGrant, error) {
	g, err := scanOAuthGrant(tx.QueryRowContext(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants WHERE `+cond+db.forUpdate(""), arg))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "unknown or used refresh token")
	}
	return g, err
}

// scanOAuthGrant reads a grant of oauthGrantColumns.
func scanOAuthGrant(row interface{ Scan(...any) error }) (*switchboard.OAuthGrant, error) {
	var g switchboard.OAuthGrant
	var agents string
	var created, rotated int64
	err := row.Scan(&g.RefreshHash, &g.AccessHash, &g.ClientID, &g.Target.AccountID, &g.Target.AgentID, &agents, &g.Label,
		&created, &g.ClientName, &rotated, &g.CodeHash)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(agents), &g.Target.Agents); err != nil {
		return nil, err
	}
	g.CreatedAt = fromNanos(created)
	if rotated != 0 {
		g.RotatedAt = fromNanos(rotated)
	}
	return &g, nil
}

// nonNilStrings returns s, or an empty slice for nil (stored as []).
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
