package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.PairingStore = (*DB)(nil)

const pairingColumns = `device_hash, user_code, agent_id, client_name, client_id, card_url, requester, status,
	label, replaces_label, replaces_hash, interval_ms, last_poll_at, decided_by, created_at, expires_at`

// slowDownStep is what each poll that comes too soon adds to a request's
// interval (RFC 8628 section 3.5).
const slowDownStep = 5 * time.Second

// CreatePairing implements switchboard.PairingStore. The agent's row is
// locked (PostgreSQL) while its requests are counted, so that instances
// that take requests together keep the limits. Every refusal is decided
// before anything is written: a refused request makes no room.
func (db *DB) CreatePairing(ctx context.Context, p *switchboard.Pairing, lim switchboard.PairingLimits) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE id = $1`+db.forUpdate(""), p.AgentID).Scan(&id)
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
		} else if err != nil {
			return err
		}
		pending, mine, err := db.pendingPairings(ctx, tx, p)
		if err != nil {
			return err
		}
		if lim.MaxPendingPerRequester > 0 && mine >= lim.MaxPendingPerRequester {
			return switchboard.Errorf(switchboard.ERATELIMITED, "your address has %d pairing requests waiting at this agent", mine)
		}
		if err := db.checkPairingCounts(ctx, tx, p, lim); err != nil {
			return err
		}
		if lim.MaxPending > 0 && pending >= lim.MaxPending {
			if err := db.makePairingRoom(ctx, tx, p, mine, pending); err != nil {
				return err
			}
		}
		// The requests made are counted in pairing_counts, which a denial or
		// a redemption does not touch.
		_, err = tx.ExecContext(ctx, `INSERT INTO pairing_counts (agent_id, requester, created_at) VALUES ($1, $2, $3)`,
			p.AgentID, p.Requester, nanos(p.CreatedAt))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO pairings (`+pairingColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, '', $13, $14)`,
			p.DeviceHash, p.UserCode, p.AgentID, p.ClientName, p.ClientID, p.CardURL, p.Requester,
			string(switchboard.PairingPending), "", p.ReplacesLabel, p.ReplacesHash, p.Interval.Milliseconds(),
			nanos(p.CreatedAt), nanos(p.ExpiresAt))
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "the code is taken")
		}
		p.Status = switchboard.PairingPending
		return err
	})
}

// pendingPairings counts the agent's pending, unexpired requests at
// p.CreatedAt: all of them, and those of p.Requester.
func (db *DB) pendingPairings(ctx context.Context, tx *sql.Tx, p *switchboard.Pairing) (all, mine int, err error) {
	err = tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN requester = $1 THEN 1 ELSE 0 END), 0) FROM pairings
		WHERE agent_id = $2 AND status = 'pending' AND expires_at > $3`, p.Requester, p.AgentID, nanos(p.CreatedAt)).Scan(&all, &mine)
	return all, mine, err
}

// checkPairingCounts applies the limits counted in pairing_counts: the
// agent's hour (for an address that asked it already in that hour) and
// the requester's window.
func (db *DB) checkPairingCounts(ctx context.Context, tx *sql.Tx, p *switchboard.Pairing, lim switchboard.PairingLimits) error {
	hourAgo := nanos(p.CreatedAt.Add(-time.Hour))
	if lim.MaxPerHour > 0 {
		var recent, asked int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN requester = $1 THEN 1 ELSE 0 END), 0) FROM pairing_counts
			WHERE agent_id = $2 AND created_at > $3`, p.Requester, p.AgentID, hourAgo).Scan(&recent, &asked)
		if err != nil {
			return err
		}
		// An address's first request in the hour is taken: the agent's
		// hour, filled by others, does not shut it out.
		if recent >= lim.MaxPerHour && asked > 0 {
			return switchboard.Errorf(switchboard.ERATELIMITED, "the agent received %d pairing requests in the last hour", recent)
		}
	}
	if lim.MaxPerRequester > 0 {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pairing_counts WHERE requester = $1 AND created_at > $2`,
			p.Requester, nanos(p.CreatedAt.Add(-lim.RequesterWindow))).Scan(&n)
		if err != nil {
			return err
		}
		if n >= lim.MaxPerRequester {
			return switchboard.Errorf(switchboard.ERATELIMITED, "too many pairing requests from your address")
		}
	}
	return nil
}

// makePairingRoom makes room for p at an agent whose pending requests
// are at their bound: the address holding the most of them (of equals,
// the one whose request is oldest) loses its oldest, which expires now,
// if it holds more than p.Requester (mine). ERATELIMITED otherwise.
func (db *DB) makePairingRoom(ctx context.Context, tx *sql.Tx, p *switchboard.Pairing, mine, pending int) error {
	now := nanos(p.CreatedAt)
	var heaviest string
	var held int
	err := tx.QueryRowContext(ctx, `SELECT requester, COUNT(*) FROM pairings WHERE agent_id = $1 AND status = 'pending' AND expires_at > $2
		GROUP BY requester ORDER BY COUNT(*) DESC, MIN(created_at), requester LIMIT 1`, p.AgentID, now).Scan(&heaviest, &held)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	if err == sql.ErrNoRows || held <= mine {
		return switchboard.Errorf(switchboard.ERATELIMITED, "the agent has %d pairing requests waiting", pending)
	}
	_, err = tx.ExecContext(ctx, `UPDATE pairings SET expires_at = $1 WHERE device_hash = (SELECT device_hash FROM pairings
		WHERE agent_id = $2 AND requester = $3 AND status = 'pending' AND expires_at > $1 ORDER BY created_at, user_code LIMIT 1)`,
		now, p.AgentID, heaviest)
	return err
}

// FindPairingByUserCode implements switchboard.PairingStore.
func (db *DB) FindPairingByUserCode(ctx context.Context, agentID, userCode string) (*switchboard.Pairing, error) {
	p, err := scanPairing(db.read.QueryRowContext(ctx, `SELECT `+pairingColumns+` FROM pairings
		WHERE user_code = $1 AND agent_id = $2`, userCode, agentID))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no pairing request with that code")
	}
	return p, db.formatError(err)
}

// FindPairings implements switchboard.PairingStore.
func (db *DB) FindPairings(ctx context.Context, f switchboard.PairingFilter) ([]*switchboard.Pairing, error) {
	w := &where{}
	w.add("agent_id = ?", f.AgentID)
	if f.Status != nil {
		w.add("status = ?", string(*f.Status))
	}
	if f.LiveAt != nil {
		w.add("expires_at > ?", nanos(*f.LiveAt))
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+pairingColumns+` FROM pairings`+w.String()+` ORDER BY created_at, user_code`, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.Pairing
	for rows.Next() {
		p, err := scanPairing(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// DecidePairing implements switchboard.PairingStore.
func (db *DB) DecidePairing(ctx context.Context, agentID, userCode string, status switchboard.PairingStatus, label, decidedBy string, at time.Time) (*switchboard.Pairing, error) {
	var out *switchboard.Pairing
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE pairings SET status = $1, label = $2, decided_by = $3
			WHERE user_code = $4 AND agent_id = $5 AND status = 'pending' AND expires_at > $6`,
			string(status), label, decidedBy, userCode, agentID, nanos(at))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		p, err := scanPairing(tx.QueryRowContext(ctx, `SELECT `+pairingColumns+` FROM pairings
			WHERE user_code = $1 AND agent_id = $2`, userCode, agentID))
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "no pairing request with that code")
		} else if err != nil {
			return err
		}
		if n == 0 {
			if p.Status == switchboard.PairingPending {
				return switchboard.Errorf(switchboard.ECONFLICT, "the pairing request has expired")
			}
			return switchboard.Errorf(switchboard.ECONFLICT, "the pairing request was %s meanwhile", p.Status)
		}
		out = p
		return nil
	})
	return out, err
}

// PollPairing implements switchboard.PairingStore.
func (db *DB) PollPairing(ctx context.Context, agentID, deviceHash string, at time.Time) (*switchboard.Pairing, switchboard.PairingPoll, error) {
	var out *switchboard.Pairing
	var poll switchboard.PairingPoll
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		p, err := scanPairing(tx.QueryRowContext(ctx, `SELECT `+pairingColumns+` FROM pairings
			WHERE device_hash = $1 AND agent_id = $2`+db.forUpdate(""), deviceHash, agentID))
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "no pairing request with that device code")
		} else if err != nil {
			return err
		}
		out = p
		switch {
		case p.Status == switchboard.PairingDenied:
			poll = switchboard.PollDenied
			_, err = tx.ExecContext(ctx, `DELETE FROM pairings WHERE device_hash = $1`, deviceHash)
		case !at.Before(p.ExpiresAt):
			poll = switchboard.PollExpired
		case p.Status == switchboard.PairingApproved:
			poll = switchboard.PollApproved // RedeemPairing deletes it
		case p.LastPollAt != nil && at.Sub(*p.LastPollAt) < p.Interval:
			poll = switchboard.PollSlowDown
			p.Interval += slowDownStep
			_, err = tx.ExecContext(ctx, `UPDATE pairings SET interval_ms = $1, last_poll_at = $2 WHERE device_hash = $3`,
				p.Interval.Milliseconds(), nanos(at), deviceHash)
		default:
			poll = switchboard.PollPending
			_, err = tx.ExecContext(ctx, `UPDATE pairings SET last_poll_at = $1 WHERE device_hash = $2`, nanos(at), deviceHash)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return out, poll, nil
}

// DeletePairings implements switchboard.PairingStore.
func (db *DB) DeletePairings(ctx context.Context, expiredBefore time.Time) (int, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM pairings WHERE expires_at < $1`, nanos(expiredBefore))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pairing_counts WHERE created_at < $1`, nanos(expiredBefore)); err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

func scanPairing(s scanner) (*switchboard.Pairing, error) {
	var p switchboard.Pairing
	var status string
	var interval, created, expires int64
	var lastPoll sql.NullInt64
	err := s.Scan(&p.DeviceHash, &p.UserCode, &p.AgentID, &p.ClientName, &p.ClientID, &p.CardURL, &p.Requester, &status,
		&p.Label, &p.ReplacesLabel, &p.ReplacesHash, &interval, &lastPoll, &p.DecidedBy, &created, &expires)
	if err != nil {
		return nil, err
	}
	p.Status = switchboard.PairingStatus(status)
	p.Interval = time.Duration(interval) * time.Millisecond
	if lastPoll.Valid {
		t := fromNanos(lastPoll.Int64)
		p.LastPollAt = &t
	}
	p.CreatedAt, p.ExpiresAt = fromNanos(created), fromNanos(expires)
	return &p, nil
}
