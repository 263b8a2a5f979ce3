package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

const sessionColumns = `agent_id, holder, instance_id, client, connected_at, expires_at`

// OpenSession implements switchboard.SessionStore.
func (db *DB) OpenSession(ctx context.Context, s *switchboard.AgentSession) (string, error) {
	var replaced string
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		replaced, err = db.openSession(ctx, tx, s)
		return err
	})
	return replaced, err
}

// ConnectSession implements switchboard.SessionStore.
func (db *DB) ConnectSession(ctx context.Context, s *switchboard.AgentSession, holding []a2a.TaskID, deadline time.Time) (replaced string, requeued int, err error) {
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if replaced, err = db.openSession(ctx, tx, s); err != nil {
			return err
		}
		requeued, err = db.requeueUnheld(ctx, tx, s.AgentID, holding, deadline)
		return err
	})
	return replaced, requeued, err
}

// openSession is OpenSession within tx.
func (db *DB) openSession(ctx context.Context, tx *sql.Tx, s *switchboard.AgentSession) (string, error) {
	var replaced string
	err := tx.QueryRowContext(ctx, `SELECT holder FROM agent_sessions WHERE agent_id = $1`+db.forUpdate(""), s.AgentID).Scan(&replaced)
	if err != nil && err != sql.ErrNoRows {
		return "", err
	}
	if replaced == s.Holder {
		replaced = ""
	}
	if replaced != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'queued', holder = '', next_attempt_at = $1
			WHERE holder = $2 AND state = 'offered'`, nanos(db.Now()), replaced); err != nil {
			return "", err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO agent_sessions (`+sessionColumns+`, renewed_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (agent_id) DO UPDATE SET holder = excluded.holder, instance_id = excluded.instance_id,
		client = excluded.client, connected_at = excluded.connected_at, expires_at = excluded.expires_at,
		renewed_at = excluded.renewed_at`,
		s.AgentID, s.Holder, s.InstanceID, s.Client, nanos(s.ConnectedAt), nanos(s.ExpiresAt), nanos(db.Now()))
	return replaced, err
}

// listChunk bounds the values (holders, agent ids) named in one IN list.
const listChunk = 500

// RenewSessions implements switchboard.SessionStore.
func (db *DB) RenewSessions(ctx context.Context, holders []string, expiresAt time.Time) ([]string, error) {
	var renewed []string
	for chunk := range slices.Chunk(holders, listChunk) {
		err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			// renewed_at tells discovery and the directory that the agent
			// is live (docs/network.md).
			w := &where{args: []any{nanos(expiresAt), nanos(db.Now())}}
			rows, err := tx.QueryContext(ctx, `UPDATE agent_sessions SET expires_at = $1, renewed_at = $2
				WHERE holder IN (`+placeholders(w, chunk)+`) RETURNING holder`, w.args...)
			if err != nil {
				return err
			}
			hs, err := scanStrings(rows)
			renewed = append(renewed, hs...)
			return err
		})
		if err != nil {
			return renewed, err
		}
	}
	return renewed, nil
}

// CloseSessions implements switchboard.SessionStore. It records when each
// agent's session ended (session_ends), which the reconnect grace of
// discovery reads.
func (db *DB) CloseSessions(ctx context.Context, holders []string) error {
	for chunk := range slices.Chunk(holders, listChunk) {
		ends := &where{args: []any{nanos(db.Now())}}
		endMarks := placeholders(ends, chunk)
		w := &where{}
		marks := placeholders(w, chunk)
		if err := db.writeReach(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO session_ends (agent_id, ended_at)
				SELECT agent_id, $1 FROM agent_sessions WHERE holder IN (`+endMarks+`)
				ON CONFLICT (agent_id) DO UPDATE SET ended_at = excluded.ended_at`, ends.args...); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM agent_sessions WHERE holder IN (`+marks+`)`, w.args...)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// FindSession implements switchboard.SessionStore.
func (db *DB) FindSession(ctx context.Context, agentID string) (*switchboard.AgentSession, error) {
	var s switchboard.AgentSession
	var connected, expires int64
	err := db.read.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM agent_sessions WHERE agent_id = $1`, agentID).
		Scan(&s.AgentID, &s.Holder, &s.InstanceID, &s.Client, &connected, &expires)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "the agent has no session")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	s.ConnectedAt, s.ExpiresAt = fromNanos(connected), fromNanos(expires)
	return &s, nil
}
