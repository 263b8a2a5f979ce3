package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/outbox"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/wake"
)

// TestReceivePushWithNULOnPostgres: a push whose text holds a NUL is
// recorded on PostgreSQL, whose text refuses NUL: the preview of the
// wake it queues carries none.
func TestReceivePushWithNULOnPostgres(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.OpenPostgres(ctx, pgtest.DSN(t), sqlstore.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "g", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	if err := db.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	u := "https://hooks.example/wake"
	c, err := wake.ApplyUpdate(g.ID, nil, wake.Update{URL: &u}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveWakeConfig(ctx, c); err != nil {
		t.Fatal(err)
	}
	svc := outbox.New(db, db)
	o := &switchboard.Outbound{AgentID: g.ID, Target: "remote", Endpoint: "https://remote.example/a2a", Protocol: switchboard.ProtocolV1, ContextID: "ctx-1"}
	if err := svc.Record(ctx, o, "push-token-0123456789"); err != nil {
		t.Fatal(err)
	}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "r1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("done\x00"))}}
	if _, err := svc.ReceivePush(ctx, g.ID, "push-token-0123456789", "r1", ev); err != nil {
		t.Fatalf("a push with a NUL in its text: %v", err)
	}
}
