package sqlstore

import (
	"context"
	"database/sql"

	"github.com/switchboard-dev/switchboard"
)

// glanceQuery reads each agent's listed settings, session expiry, waiting
// tasks and newest task in one statement: the counts come from the
// tasks_agent_state index (agent, state, created), read over the agent's
// range only.
const glanceQuery = `SELECT a.id, a.account_id, a.handle, a.name, a.description, a.mode, a.accepts_tasks, a.approved,
	COALESCE(s.expires_at, 0),
	(SELECT COUNT(*) FROM tasks t WHERE t.agent_id = a.id AND t.state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')),
	COALESCE((SELECT MAX(t.created_at) FROM tasks t WHERE t.agent_id = a.id), 0)
	FROM agents a LEFT JOIN agent_sessions s ON s.agent_id = a.id`

// FindAgentGlances implements switchboard.AgentGlanceStore.
func (db *DB) FindAgentGlances(ctx context.Context, accountID string) ([]*switchboard.AgentGlance, error) {
	var rows *sql.Rows
	var err error
	if accountID == "" {
		rows, err = db.read.QueryContext(ctx, glanceQuery+` ORDER BY a.handle`)
	} else {
		rows, err = db.read.QueryContext(ctx, glanceQuery+` WHERE a.account_id = $1 ORDER BY a.handle`, accountID)
	}
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.AgentGlance
	for rows.Next() {
		var g switchboard.AgentGlance
		var expires, last int64
		if err := rows.Scan(&g.ID, &g.AccountID, &g.Handle, &g.Name, &g.Description, &g.Mode, &g.AcceptsTasks, &g.Approved,
			&expires, &g.Waiting, &last); err != nil {
			return nil, db.formatError(err)
		}
		if expires != 0 {
			g.SessionExpiresAt = fromNanos(expires)
		}
		if last != 0 {
			g.LastTaskAt = fromNanos(last)
		}
		out = append(out, &g)
	}
	return out, db.formatError(rows.Err())
}
