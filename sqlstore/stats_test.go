package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

func TestSQLiteStats(t *testing.T)   { testStats(t, MustOpenSQLite(t)) }
func TestPostgresStats(t *testing.T) { testStats(t, MustOpenPostgres(t)) }

// testStats checks the counts behind /metrics, the task state hook and
// Ping, on one engine.
func testStats(t *testing.T, db *sqlstore.DB) {
	ctx := context.Background()
	type change struct{ from, to a2a.TaskState }
	var mu sync.Mutex
	var changes []change
	db.OnTaskState = func(from, to a2a.TaskState) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, change{from, to})
	}

	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	agent := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "live", Name: "Live",
		Mode: switchboard.ModeConnector, AcceptsTasks: true}
	if err := db.CreateAgent(ctx, agent); err != nil {
		t.Fatal(err)
	}
	svc := relay.New(db, membus.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	peer := switchboard.Peer{AgentID: agent.ID, ID: "peer-1", Label: "bob"}
	var tasks []*switchboard.Task
	for i := range 3 {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
		msg.ID = fmt.Sprintf("m%d", i)
		task, _, err := svc.SendMessage(ctx, agent, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1)
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	if _, err := db.ClaimDeliveries(ctx, agent.ID, "holder", 1, switchboard.DefaultAckTimeout); err != nil {
		t.Fatal(err)
	}
	if err := svc.FailAgentTask(ctx, agent, tasks[2].ID(), "done with it", false); err != nil {
		t.Fatal(err)
	}
	// A change that changes nothing is not a change of state.
	if _, _, err := db.ModifyTask(ctx, tasks[1].ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}

	gotTasks, err := db.CountUnfinishedTasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[a2a.TaskState]int{a2a.TaskStateSubmitted: 2}); !reflect.DeepEqual(gotTasks, want) {
		t.Errorf("unfinished tasks: got %v, want %v", gotTasks, want)
	}
	gotDeliveries, err := db.CountOpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The oldest delivery was offered; the third task's closed when it failed.
	want := map[switchboard.DeliveryState]int{switchboard.DeliveryOffered: 1, switchboard.DeliveryQueued: 1}
	if !reflect.DeepEqual(gotDeliveries, want) {
		t.Errorf("open deliveries: got %v, want %v", gotDeliveries, want)
	}
	mu.Lock()
	wantChanges := []change{{"", a2a.TaskStateSubmitted}, {"", a2a.TaskStateSubmitted}, {"", a2a.TaskStateSubmitted},
		{a2a.TaskStateSubmitted, a2a.TaskStateFailed}}
	if !reflect.DeepEqual(changes, wantChanges) {
		t.Errorf("state changes: got %v, want %v", changes, wantChanges)
	}
	mu.Unlock()

	if err := db.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	_ = db.Close()
	if err := db.Ping(ctx); err == nil {
		t.Fatal("ping of a closed store succeeded")
	}
}

// TestSQLiteUnfinishedTasksUseIndex guards the cost of the task gauges: the
// count reads the partial index of unfinished tasks, not the table.
func TestSQLiteUnfinishedTasksUseIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchboard.db")
	db, err := sqlstore.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(`EXPLAIN QUERY PLAN SELECT state, COUNT(*) FROM tasks WHERE state IN
		('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED') GROUP BY state`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "COVERING INDEX tasks_unfinished") {
		t.Fatalf("plan: %s", got)
	}
}
