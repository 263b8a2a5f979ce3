package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
)

const tokenColumns = `hash, kind, account_id, agent_id, community, label, peer_id, created_at, revoked_at, last_used_at, agents, created_agent, expires_at`

// CreateToken implements switchboard.TokenStore.
func (db *DB) CreateToken(ctx context.Context, t *switchboard.Token, replace bool) error {
	now := db.Now().UTC()
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		same := `kind = $1 AND account_id = $2 AND agent_id = $3 AND community = $4 AND label = $5`
		keys := []any{string(t.Kind), t.AccountID, t.AgentID, t.Community, t.Label}
		existing, err := scanToken(tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, t.Hash))
		switch {
		case err == sql.ErrNoRows:
			existing = nil
		case err != nil:
			return err
		case !replace || existing.Kind != t.Kind || existing.AccountID != t.AccountID ||
			existing.AgentID != t.AgentID || existing.Community != t.Community || existing.Label != t.Label:
			return switchboard.Errorf(switchboard.ECONFLICT, "this token is already in use")
		}

		peerID := switchboard.NewID()
		if replace {
			// A rotation: the new token stands for the same peer.
			var prev string
			err := tx.QueryRowContext(ctx, `SELECT peer_id FROM tokens WHERE `+same+` AND revoked_at IS NULL`, keys...).Scan(&prev)
			if err == nil && prev != "" {
				peerID = prev
			} else if err != nil && err != sql.ErrNoRows {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = $6 WHERE `+same+` AND revoked_at IS NULL`,
				append(keys, nanos(now))...); err != nil {
				return err
			}
		}
		if t.Kind != switchboard.TokenPeer {
			peerID = ""
		}
		if existing != nil {
			// The same secret again (a preset owner token reused): reactivate it.
			_, err = tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = NULL, created_at = $1, peer_id = $2 WHERE hash = $3`,
				nanos(now), peerID, t.Hash)
		} else {
			var expires any
			if t.ExpiresAt != nil {
				expires = nanos(*t.ExpiresAt)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, NULL, $9, '', $10)`,
				t.Hash, string(t.Kind), t.AccountID, t.AgentID, t.Community, t.Label, peerID, nanos(now), strings.Join(t.Agents, ","), expires)
		}
		if db.dialect.uniqueViolation(err) {
			if t.Label != "" {
				return switchboard.Errorf(switchboard.ECONFLICT, "an active token labelled %q already exists", t.Label)
			}
			return switchboard.Errorf(switchboard.ECONFLICT, "an active token already exists")
		} else if err != nil {
			return err
		}
		t.CreatedAt, t.RevokedAt, t.PeerID = now, nil, peerID
		return nil
	})
}

// FindTokenByHash implements switchboard.TokenStore.
func (db *DB) FindTokenByHash(ctx context.Context, hash string) (*switchboard.Token, error) {
	t, err := db.cachedToken(ctx, hash)
	if err == nil && t.ExpiresAt != nil && !db.Now().Before(*t.ExpiresAt) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "token not found")
	}
	return t, err
}

// findToken reads the active token with the hash.
func (db *DB) findToken(ctx context.Context, hash string) (*switchboard.Token, error) {
	t, err := scanToken(db.read.QueryRowContext(ctx,
		`SELECT `+tokenColumns+` FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, hash))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "token not found")
	}
	return t, db.formatError(err)
}

// FindTokens implements switchboard.TokenStore.
func (db *DB) FindTokens(ctx context.Context, f switchboard.TokenFilter) ([]*switchboard.Token, error) {
	w := &where{}
	addTokenConds(w, f)
	rows, err := db.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens`+w.String()+` ORDER BY created_at, hash`, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeTokens implements switchboard.TokenStore.
func (db *DB) RevokeTokens(ctx context.Context, f switchboard.TokenFilter) (int, error) {
	f.Active = true
	w := &where{args: []any{nanos(db.Now())}} // $1 is the revocation time
	addTokenConds(w, f)
	var n int64
	err := db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = $1`+w.String(), w.args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// TouchToken implements switchboard.TokenStore. It writes outside
// writeIdentities: when a token was last used changes nothing a request
// looks up, so the identity cache stays as it is.
func (db *DB) TouchToken(ctx context.Context, hash string, at time.Time) error {
	_, err := db.write.ExecContext(ctx, `UPDATE tokens SET last_used_at = $1 WHERE hash = $2`, nanos(at.UTC()), hash)
	return db.formatError(err)
}

// RecordCreatedAgent implements switchboard.TokenStore. It goes through
// writeIdentities: the token's cached copy must show the agent.
func (db *DB) RecordCreatedAgent(ctx context.Context, hash, agentID string) error {
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var created string
		err := tx.QueryRowContext(ctx, `SELECT created_agent FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, hash).Scan(&created)
		switch {
		case err == sql.ErrNoRows:
			return switchboard.Errorf(switchboard.ENOTFOUND, "token not found")
		case err != nil:
			return err
		case created != "":
			return switchboard.Errorf(switchboard.ECONFLICT, "this token created an agent already")
		}
		// Conditional: two instances may both have read '' above.
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET created_agent = $1 WHERE hash = $2 AND created_agent = ''`, agentID, hash)
		if err != nil {
			return err
		}
		return changedRow(res, switchboard.Errorf(switchboard.ECONFLICT, "this token created an agent already"))
	})
}

func addTokenConds(w *where, f switchboard.TokenFilter) {
	if f.Kind != nil {
		w.add("kind = ?", string(*f.Kind))
	}
	if f.AccountID != nil {
		w.add("account_id = ?", *f.AccountID)
	}
	if f.AgentID != nil {
		w.add("agent_id = ?", *f.AgentID)
	}
	if f.Community != nil {
		w.add("community = ?", *f.Community)
	}
	if f.Label != nil {
		w.add("label = ?", *f.Label)
	}
	if f.Active {
		w.add("revoked_at IS NULL")
	}
}

func scanToken(s scanner) (*switchboard.Token, error) {
	var t switchboard.Token
	var kind string
	var created int64
	var revoked, used, expires sql.NullInt64
	var agents string
	if err := s.Scan(&t.Hash, &kind, &t.AccountID, &t.AgentID, &t.Community, &t.Label, &t.PeerID, &created, &revoked, &used,
		&agents, &t.CreatedAgent, &expires); err != nil {
		return nil, err
	}
	t.ExpiresAt = nullNanos(expires)
	t.Kind = switchboard.TokenKind(kind)
	t.CreatedAt = fromNanos(created)
	t.RevokedAt = nullNanos(revoked)
	t.LastUsedAt = nullNanos(used)
	if agents != "" {
		t.Agents = strings.Split(agents, ",")
	}
	return &t, nil
}
