package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// finishedStates are the final states of a task, as the partial index
// tasks_finished (migration 0009) lists them.
const finishedStates = `'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'`

// taskIDColumn is the name that marks a column as naming a task of this
// deployment: retention deletes the rows whose task_id is a task it
// deletes. A column that holds another deployment's task id must be named
// otherwise (remote_task_id).
const taskIDColumn = "task_id"

// taskRef is a column whose rows belong to the task it names.
type taskRef struct{ table, column string }

// ExpireTasks implements switchboard.TaskStore. The tables it deletes from
// are read from the schema in the same transaction: every column named
// task_id and every foreign key to tasks(id), children before the tables
// they reference; rows that reference those rows go with them through ON
// DELETE CASCADE.
func (db *DB) ExpireTasks(ctx context.Context, finishedBefore time.Time, max int) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	var n int
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		tables, err := db.schemaTables(ctx, tx)
		if err != nil {
			return err
		}
		ids, err := queryStrings(ctx, tx, `SELECT id FROM tasks WHERE state IN (`+finishedStates+`) AND status_at < $1
			ORDER BY status_at, id LIMIT $2`+db.forClaim(""), nanos(finishedBefore), max)
		if err != nil || len(ids) == 0 {
			return err
		}
		in, args := inList(ids)
		for _, ref := range taskRefs(tables) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(ref.table)+` WHERE `+quoteIdent(ref.column)+` IN (`+in+`)`, args...); err != nil {
				return fmt.Errorf("delete from %s: %w", ref.table, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE id IN (`+in+`)`, args...); err != nil {
			return fmt.Errorf("delete tasks: %w", err)
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("expire tasks: %w", err)
	}
	return n, nil
}

// taskRefs returns the columns that name a task, tables that reference
// others first (tables come sorted parents first).
func taskRefs(tables []*table) []taskRef {
	var refs []taskRef
	for _, t := range slices.Backward(tables) {
		if t.name == "tasks" {
			continue
		}
		seen := map[string]bool{}
		if t.column(taskIDColumn) != nil {
			refs = append(refs, taskRef{t.name, taskIDColumn})
			seen[taskIDColumn] = true
		}
		for _, r := range t.refs {
			if r.refTable == "tasks" && r.refCol == "id" && !seen[r.col] {
				refs = append(refs, taskRef{t.name, r.col})
				seen[r.col] = true
			}
		}
	}
	return refs
}

// inList returns "$1, $2, …" for the values and the values as arguments.
func inList(values []string) (string, []any) {
	ph := make([]string, len(values))
	args := make([]any, len(values))
	for i, v := range values {
		ph[i] = fmt.Sprintf("$%d", i+1)
		args[i] = v
	}
	return strings.Join(ph, ", "), args
}
