package sqlstore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// createTask stores a new submitted task for agentID: the task row, its
// first event and its message id, in one transaction.
func createTask(db *sqlstore.DB, agentID, messageID string) error {
	id := a2a.TaskID(switchboard.NewID())
	now := time.Now().UTC()
	msg := &a2a.Message{ID: messageID, Role: a2a.MessageRoleUser, TaskID: id, ContextID: "c",
		Parts: a2a.ContentParts{a2a.NewTextPart("hello")}}
	task := &switchboard.Task{
		A2A: a2a.Task{ID: id, ContextID: "c", History: []*a2a.Message{msg},
			Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}},
		AgentID: agentID, PeerID: "peer", PeerLabel: "bob", Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now,
	}
	_, err := db.CreateTask(context.Background(), task, &switchboard.TaskChange{MessageID: messageID})
	return err
}

// TestExportIsASnapshot exports while tasks are being created: each
// export holds, for every task, its event and message id, and no event
// or message id of a task it lacks, although task_events and
// task_messages are read before tasks.
func TestExportIsASnapshot(t *testing.T) {
	for name, db := range map[string]*sqlstore.DB{"sqlite": MustOpenSQLite(t), "postgres": MustOpenPostgres(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
			must(t, db.CreateAccount(ctx, acct))
			g := &switchboard.Agent{ID: "agent-1", AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
			must(t, db.CreateAgent(ctx, g))
			for i := range 200 {
				must(t, createTask(db, g.ID, fmt.Sprint("seed-", i)))
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			defer func() { close(stop); wg.Wait() }()
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if err := createTask(db, g.ID, fmt.Sprint("live-", i)); err != nil {
						t.Error(err)
						return
					}
				}
			})
			for range 5 {
				var b bytes.Buffer
				if _, err := db.Export(ctx, &b); err != nil {
					t.Fatal(err)
				}
				checkTasksWhole(t, b.Bytes())
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkTasksWhole reads an export and checks that tasks, events and
// message ids name the same set of tasks.
func checkTasksWhole(t *testing.T, dump []byte) {
	t.Helper()
	sets := map[string]map[string]bool{"tasks": {}, "task_events": {}, "task_messages": {}}
	sc := bufio.NewScanner(bytes.NewReader(dump))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Table string
			Row   map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		set, ok := sets[l.Table]
		if !ok {
			continue
		}
		key := "task_id"
		if l.Table == "tasks" {
			key = "id"
		}
		set[fmt.Sprint(l.Row[key])] = true
	}
	tasks := sets["tasks"]
	for _, other := range []string{"task_events", "task_messages"} {
		if len(sets[other]) != len(tasks) {
			t.Fatalf("the export holds %d tasks and %s of %d tasks", len(tasks), other, len(sets[other]))
		}
		for id := range sets[other] {
			if !tasks[id] {
				t.Fatalf("%s of task %s, which the export lacks", other, id)
			}
		}
	}
}
