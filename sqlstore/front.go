package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.FrontStore = (*DB)(nil)

// PutFront implements switchboard.FrontStore. The upstream's URLs are
// sealed, as its credentials are: a URL may carry a key in its query.
func (db *DB) PutFront(ctx context.Context, agentID, upstream, cardURL string) error {
	sealedUpstream, err := db.seal(purposeFrontUpstream, upstream)
	if err != nil {
		return err
	}
	sealedCardURL, err := db.seal(purposeFrontCardURL, cardURL)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := agentExists(ctx, tx, db, agentID); err != nil {
			return err
		}
		// The last failure stays while the upstream does. Sealed values
		// differ each time, so the URLs are compared opened.
		var was string
		switch err := tx.QueryRowContext(ctx, `SELECT upstream FROM fronts WHERE agent_id = $1`+db.forUpdate(""), agentID).Scan(&was); {
		case err == sql.ErrNoRows:
		case err != nil:
			return err
		default:
			if was, err = db.open(purposeFrontUpstream, was); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO fronts (agent_id, upstream, card_url, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (agent_id) DO UPDATE SET upstream = excluded.upstream, card_url = excluded.card_url,
				updated_at = excluded.updated_at`,
			agentID, sealedUpstream, sealedCardURL, nanos(db.Now())); err != nil {
			return err
		}
		if was == upstream {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE fronts SET last_failure = '' WHERE agent_id = $1`, agentID)
		return err
	})
}

// agentExists returns ENOTFOUND unless the agent is there (and keeps it
// there until tx ends, on PostgreSQL).
func agentExists(ctx context.Context, tx *sql.Tx, db *DB, agentID string) error {
	var found string
	err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE id = $1`+db.forShare(""), agentID).Scan(&found)
	if err == sql.ErrNoRows {
		return switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	return err
}

// SetFrontCredentials implements switchboard.FrontStore.
func (db *DB) SetFrontCredentials(ctx context.Context, agentID string, c switchboard.FrontCredentials) error {
	plain := ""
	if !c.Empty() {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		plain = string(b)
	}
	sealed, err := db.seal(purposeFrontCredentials, plain)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE fronts SET credentials = $1, last_failure = '', updated_at = $2 WHERE agent_id = $3`,
			sealed, nanos(db.Now()), agentID)
		if err != nil {
			return err
		}
		if err := changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "the agent has no upstream")); err != nil {
			return err
		}
		return nil
	})
}

// SetFrontRecord implements switchboard.FrontStore.
func (db *DB) SetFrontRecord(ctx context.Context, agentID, record string) error {
	if err := switchboard.CheckFrontRecord(record); err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE fronts SET record = $1, updated_at = $2 WHERE agent_id = $3`,
			record, nanos(db.Now()), agentID)
		if err != nil {
			return err
		}
		return changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "the agent has no upstream"))
	})
}

// FindFront implements switchboard.FrontStore.
func (db *DB) FindFront(ctx context.Context, agentID string) (*switchboard.Front, error) {
	f := &switchboard.Front{AgentID: agentID}
	var creds, failure string
	var updated int64
	err := db.read.QueryRowContext(ctx, `SELECT upstream, card_url, credentials, last_failure, record, updated_at FROM fronts WHERE agent_id = $1`,
		agentID).Scan(&f.Upstream, &f.CardURL, &creds, &failure, &f.Record, &updated)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "the agent has no upstream")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	f.UpdatedAt = fromNanos(updated)
	if f.Upstream, err = db.open(purposeFrontUpstream, f.Upstream); err != nil {
		return nil, err
	}
	if f.CardURL, err = db.open(purposeFrontCardURL, f.CardURL); err != nil {
		return nil, err
	}
	if creds, err = db.open(purposeFrontCredentials, creds); err != nil {
		return nil, err
	}
	if creds != "" {
		if err := json.Unmarshal([]byte(creds), &f.Credentials); err != nil {
			return nil, fmt.Errorf("front credentials of agent %s: %w", agentID, err)
		}
	}
	if failure != "" {
		f.LastFailure = new(switchboard.FrontFailure)
		if err := json.Unmarshal([]byte(failure), f.LastFailure); err != nil {
			return nil, fmt.Errorf("front failure of agent %s: %w", agentID, err)
		}
	}
	return f, nil
}

// RecordFrontFailure implements switchboard.FrontStore.
func (db *DB) RecordFrontFailure(ctx context.Context, agentID string, f *switchboard.FrontFailure) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE fronts SET last_failure = $1 WHERE agent_id = $2`, string(b), agentID)
		return err
	})
}

// MapFrontTask implements switchboard.FrontStore.
func (db *DB) MapFrontTask(ctx context.Context, m switchboard.FrontTaskMap) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return db.mapFrontTask(ctx, tx, m)
	})
}

// mapFrontTask is MapFrontTask within tx (ModifyTask's, for
// TaskChange.FrontMap).
func (db *DB) mapFrontTask(ctx context.Context, tx *sql.Tx, m switchboard.FrontTaskMap) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO front_tasks (task_id, agent_id, upstream_task_id, upstream_context_id)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (task_id) DO UPDATE SET
			upstream_task_id = CASE WHEN front_tasks.upstream_task_id = '' THEN excluded.upstream_task_id ELSE front_tasks.upstream_task_id END,
			upstream_context_id = CASE WHEN front_tasks.upstream_context_id = '' THEN excluded.upstream_context_id ELSE front_tasks.upstream_context_id END`,
		string(m.TaskID), m.AgentID, m.UpstreamTaskID, m.UpstreamContextID); err != nil {
		return err
	}
	if m.UpstreamContextID == "" || m.ContextID == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO front_contexts (agent_id, peer_id, context_id, upstream_context_id, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (agent_id, peer_id, context_id) DO NOTHING`,
		m.AgentID, m.PeerID, m.ContextID, m.UpstreamContextID, nanos(db.Now()))
	return err
}

// FindFrontTask implements switchboard.FrontStore.
func (db *DB) FindFrontTask(ctx context.Context, taskID a2a.TaskID) (*switchboard.FrontTaskMap, error) {
	m := &switchboard.FrontTaskMap{TaskID: taskID}
	err := db.read.QueryRowContext(ctx, `SELECT agent_id, upstream_task_id, upstream_context_id FROM front_tasks WHERE task_id = $1`,
		string(taskID)).Scan(&m.AgentID, &m.UpstreamTaskID, &m.UpstreamContextID)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no upstream task")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	return m, nil
}

// FindFrontContext implements switchboard.FrontStore.
func (db *DB) FindFrontContext(ctx context.Context, agentID, peerID, contextID string) (string, error) {
	var up string
	err := db.read.QueryRowContext(ctx, `SELECT upstream_context_id FROM front_contexts WHERE agent_id = $1 AND peer_id = $2 AND context_id = $3`,
		agentID, peerID, contextID).Scan(&up)
	if err == sql.ErrNoRows {
		return "", nil
	} else if err != nil {
		return "", db.formatError(err)
	}
	return up, nil
}
