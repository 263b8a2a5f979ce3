package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

const outboundColumns = `id, agent_id, target, endpoint, protocol, remote_task_id, context_id, state, push_hash, created_at, updated_at, data`

// outboundData is the JSON kept in outbound.data: what has no column.
type outboundData struct {
	MessageID string                       `json:"message_id,omitempty"`
	Text      string                       `json:"text"`
	Task      *a2a.Task                    `json:"task,omitempty"`
	Reply     *a2a.Message                 `json:"reply,omitempty"`
	Error     string                       `json:"error,omitempty"`
	Updates   []switchboard.OutboundUpdate `json:"updates,omitempty"`
}

// CreateOutbound implements switchboard.OutboundStore.
func (db *DB) CreateOutbound(ctx context.Context, o *switchboard.Outbound) error {
	data, err := encodeOutbound(o)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var found string
		err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE id = $1`+db.forShare(""), o.AgentID).Scan(&found)
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
		} else if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO outbound (`+outboundColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			o.ID, o.AgentID, o.Target, o.Endpoint, string(o.Protocol), string(o.TaskID), o.ContextID, string(o.State),
			o.PushTokenHash, nanos(o.CreatedAt), nanos(o.UpdatedAt), data)
		return err
	})
}

// FindOutboundByID implements switchboard.OutboundStore.
func (db *DB) FindOutboundByID(ctx context.Context, id string) (*switchboard.Outbound, error) {
	o, err := scanOutbound(db.read.QueryRowContext(ctx, `SELECT `+outboundColumns+` FROM outbound WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "outbound record not found")
	}
	return o, db.formatError(err)
}

// FindOutbounds implements switchboard.OutboundStore.
func (db *DB) FindOutbounds(ctx context.Context, f switchboard.OutboundFilter) ([]*switchboard.Outbound, error) {
	var w where
	if f.AgentID != "" {
		w.add("agent_id = ?", f.AgentID)
	}
	if f.ContextID != "" {
		w.add("context_id = ?", f.ContextID)
	}
	if f.TaskID != "" {
		w.add("remote_task_id = ?", string(f.TaskID))
	}
	switch {
	case f.Pending && f.PushTokenHash != "":
		// The same test in a form no index serves: SQLite would otherwise
		// search outbound_task for all the agent's pending records rather
		// than outbound_push for the one with this token.
		w.add("length(remote_task_id) = 0")
	case f.Pending:
		w.add("remote_task_id = ''")
	}
	if f.PushTokenHash != "" {
		// The second term lets SQLite use the partial index outbound_push.
		w.add("push_hash = ?", f.PushTokenHash)
		w.add("push_hash <> ''")
	}
	// Records of one task, push token or context are few: they are sorted
	// here, so that SQLite searches the index of that column instead of
	// reading all the agent's records in outbound_agent's order, which it
	// prefers to a sort when the query has an ORDER BY.
	sortHere := f.TaskID != "" || f.PushTokenHash != "" || f.ContextID != ""
	order := " ORDER BY updated_at DESC, id DESC"
	if f.OldestFirst {
		order = " ORDER BY created_at, id"
	}
	q := `SELECT ` + outboundColumns + ` FROM outbound` + w.String()
	if !sortHere {
		q += order
		if f.Limit > 0 {
			q += " LIMIT " + w.arg(f.Limit)
		}
	}
	rows, err := db.read.QueryContext(ctx, q, w.args...)
	if err != nil {
		return nil, db.formatError(err)
	}
	out, err := scanOutbounds(rows)
	if err != nil || !sortHere {
		return out, err
	}
	slices.SortFunc(out, func(a, b *switchboard.Outbound) int {
		if f.OldestFirst {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		}
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(b.ID, a.ID))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// scanOutbounds reads the records of rows.
func scanOutbounds(rows *sql.Rows) ([]*switchboard.Outbound, error) {
	defer rows.Close()
	var out []*switchboard.Outbound
	for rows.Next() {
		o, err := scanOutbound(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// ModifyOutbound implements switchboard.OutboundStore.
func (db *DB) ModifyOutbound(ctx context.Context, id string, fn func(*switchboard.Outbound) (*switchboard.WakeRequest, error)) (*switchboard.Outbound, bool, error) {
	var out *switchboard.Outbound
	var queued bool
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		queued = false
		o, err := scanOutbound(tx.QueryRowContext(ctx, `SELECT `+outboundColumns+` FROM outbound WHERE id = $1`+db.forUpdate(""), id))
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "outbound record not found")
		} else if err != nil {
			return err
		}
		wake, err := fn(o)
		if err != nil {
			return err
		}
		data, err := encodeOutbound(o)
		if err != nil {
			return err
		}
		// The id, agent and push token hash never change.
		_, err = tx.ExecContext(ctx, `UPDATE outbound SET target = $1, endpoint = $2, protocol = $3, remote_task_id = $4,
			context_id = $5, state = $6, updated_at = $7, data = $8 WHERE id = $9`,
			o.Target, o.Endpoint, string(o.Protocol), string(o.TaskID), o.ContextID, string(o.State), nanos(o.UpdatedAt), data, id)
		if err != nil {
			return err
		}
		if wake != nil {
			if queued, err = db.enqueueWake(ctx, tx, wake); err != nil {
				return err
			}
		}
		out = o
		return nil
	})
	if err != nil {
		return nil, false, db.formatError(err)
	}
	return out, queued, nil
}

func encodeOutbound(o *switchboard.Outbound) (string, error) {
	b, err := json.Marshal(outboundData{MessageID: o.MessageID, Text: o.Text, Task: o.Task, Reply: o.Reply, Error: o.Error, Updates: o.Updates})
	if err != nil {
		return "", fmt.Errorf("encode outbound record: %w", err)
	}
	return string(b), nil
}

func scanOutbound(s scanner) (*switchboard.Outbound, error) {
	var o switchboard.Outbound
	var proto, taskID, state, data string
	var created, updated int64
	if err := s.Scan(&o.ID, &o.AgentID, &o.Target, &o.Endpoint, &proto, &taskID, &o.ContextID, &state,
		&o.PushTokenHash, &created, &updated, &data); err != nil {
		return nil, err
	}
	var d outboundData
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return nil, fmt.Errorf("decode outbound record: %w", err)
	}
	o.Protocol = switchboard.ProtocolVersion(proto)
	o.TaskID = a2a.TaskID(taskID)
	o.State = a2a.TaskState(state)
	o.CreatedAt, o.UpdatedAt = fromNanos(created), fromNanos(updated)
	o.MessageID, o.Text, o.Task, o.Reply, o.Error, o.Updates = d.MessageID, d.Text, d.Task, d.Reply, d.Error, d.Updates
	return &o, nil
}

var _ switchboard.OutboundStore = (*DB)(nil)
