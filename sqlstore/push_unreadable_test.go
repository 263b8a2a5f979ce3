package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
)

// TestClaimPushesUnreadableConfig: a push whose configuration does not
// open fails alone, with why; the claim goes on with the others, rather
// than fail every claim and stop every push behind it.
func TestClaimPushesUnreadableConfig(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	db := mustOpenSQLiteAt(t, path)
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g))
	now := time.Now().UTC()
	task := &switchboard.Task{A2A: a2a.Task{ID: a2a.TaskID(switchboard.NewID()), ContextID: "c",
		History: []*a2a.Message{{ID: "m1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}},
		Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}},
		AgentID: g.ID, PeerID: "id-bob", PeerLabel: "bob", Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now}
	push := func(id string) *switchboard.PushConfig {
		return &switchboard.PushConfig{Config: a2a.PushConfig{TaskID: task.ID(), ID: id, URL: "https://example.com/" + id},
			Protocol: switchboard.ProtocolV1, CreatedAt: now}
	}
	_, err := db.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: "m1", PushConfig: push("broken")})
	must(t, err)
	must(t, db.SavePushConfig(ctx, push("fine")))
	_, _, err = db.ModifyTask(ctx, task.ID(), func(t *switchboard.Task) (*switchboard.TaskChange, error) {
		t.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &now}
		return &switchboard.TaskChange{Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: t.ID(), ContextID: "c", Status: t.A2A.Status}}}, nil
	})
	must(t, err)
	rawExec(t, "sqlite", sqlitetest.DSN(path), `UPDATE push_configs SET data = 'sb1.nosuchkey.AAAA' WHERE id = 'broken'`)

	claimed, err := db.ClaimPushes(ctx, "h", time.Now().Add(time.Second), 10, time.Minute, switchboard.PushLimits{})
	if err != nil || len(claimed) != 1 || claimed[0].ConfigID != "fine" {
		t.Fatalf("claimed %v, %v; want the readable push alone", claimed, err)
	}
	ps, err := db.FindPushes(ctx, task.ID())
	must(t, err)
	for _, p := range ps {
		if p.ConfigID == "broken" && (p.State != switchboard.PushFailed || p.LastError == "") {
			t.Fatalf("the unreadable push: %+v", p)
		}
	}
}
