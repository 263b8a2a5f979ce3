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
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
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
	raw, err := sql.Open("sqlite", sqlitetest.DSN(path))
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

func TestSQLiteOpenCounts(t *testing.T)   { testOpenCounts(t, MustOpenSQLite(t)) }
func TestPostgresOpenCounts(t *testing.T) { testOpenCounts(t, MustOpenPostgres(t)) }

// testOpenCounts checks the counts behind the console's health page: live
// sessions per instance, open wakes and open pushes.
func testOpenCounts(t *testing.T, db *sqlstore.DB) {
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	var agents []*switchboard.Agent
	for _, h := range []string{"one", "two", "three"} {
		g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: h, Name: h, Mode: switchboard.ModeConnector, AcceptsTasks: true}
		if err := db.CreateAgent(ctx, g); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, g)
	}
	now := time.Now()
	for i, g := range agents {
		s := &switchboard.AgentSession{AgentID: g.ID, Holder: "conn-" + g.Handle, InstanceID: "i-a", ConnectedAt: now, ExpiresAt: now.Add(time.Minute)}
		switch i {
		case 1:
			s.InstanceID = "i-b"
		case 2:
			s.ExpiresAt = now.Add(-time.Second) // lapsed
		}
		if _, err := db.OpenSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	sessions, err := db.CountLiveSessions(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[string]int{"i-a": 1, "i-b": 1}); !reflect.DeepEqual(sessions, want) {
		t.Errorf("live sessions: got %v, want %v", sessions, want)
	}

	if err := db.SaveWakeConfig(ctx, &switchboard.WakeConfig{AgentID: agents[0].ID, URL: "https://wake.example/", Preset: "generic",
		KeyHeader: "Authorization", OpenClawAgentID: "main", CLICommand: "switchboard", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"ctx-1", "ctx-2"} {
		if _, err := db.EnqueueWake(ctx, &switchboard.WakeRequest{AgentID: agents[0].ID, ContextID: c, Kind: switchboard.WakeOutboundUpdate}); err != nil {
			t.Fatal(err)
		}
	}
	wakes, err := db.CountOpenWakes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[switchboard.WakeState]int{switchboard.WakePending: 2}); !reflect.DeepEqual(wakes, want) {
		t.Errorf("open wakes: got %v, want %v", wakes, want)
	}

	svc := relay.New(db, membus.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	peer := switchboard.Peer{AgentID: agents[1].ID, ID: "peer-1", Label: "bob"}
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "https://push.example/hook"}}}
	task, _, err := svc.SendMessage(ctx, agents[1], peer, req, switchboard.ProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	if pushes, err := db.CountOpenPushes(ctx); err != nil || len(pushes) != 0 {
		t.Fatalf("open pushes before a change: %v %v", pushes, err)
	}
	if err := svc.FailAgentTask(ctx, agents[1], task.ID(), "no", false); err != nil {
		t.Fatal(err)
	}
	pushes, err := db.CountOpenPushes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[switchboard.PushState]int{switchboard.PushQueued: 1}); !reflect.DeepEqual(pushes, want) {
		t.Errorf("open pushes: got %v, want %v", pushes, want)
	}
}
