package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// kibText is the 1 KiB of text the benchmarks' messages carry.
var kibText = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)[:1024]

// BenchmarkAcceptMessage measures the store calls relay.Service.SendMessage
// makes for a new message: the messageId looked up (not found) and the task
// created with its first event and the message id, in one transaction;
// for a live agent, with a queued delivery as well. The message is 1 KiB
// of text. The PostgreSQL runs skip without SWITCHBOARD_TEST_POSTGRES.
func BenchmarkAcceptMessage(b *testing.B) {
	text := kibText
	for _, st := range []struct {
		name string
		open func(testing.TB) *sqlstore.DB
	}{
		{"sqlite", MustOpenSQLite},
		{"postgres", MustOpenPostgres},
	} {
		for _, mode := range []switchboard.DeliveryMode{switchboard.ModeInbox, switchboard.ModeConnector} {
			b.Run(st.name+"/"+string(mode), func(b *testing.B) {
				ctx := context.Background()
				db := st.open(b)
				agent := seedAgent(b, db, mode)
				peer := switchboard.Peer{AgentID: agent.ID, ID: switchboard.NewID(), Label: "peer"}
				b.ReportAllocs()
				for b.Loop() {
					msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
					if _, err := db.FindTaskByMessageID(ctx, agent.ID, peer.ID, msg.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
						b.Fatalf("messageId lookup: %v", err)
					}
					t, change := acceptedTask(agent, peer, msg)
					if _, err := db.CreateTask(ctx, t, change); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// acceptedTask returns a new task for msg and its change, as
// relay.Service.SendMessage builds them.
func acceptedTask(agent *switchboard.Agent, peer switchboard.Peer, msg *a2a.Message) (*switchboard.Task, *switchboard.TaskChange) {
	now := time.Now().UTC()
	msg.TaskID, msg.ContextID = a2a.TaskID(switchboard.NewID()), switchboard.NewID()
	t := &switchboard.Task{
		A2A: a2a.Task{
			ID: msg.TaskID, ContextID: msg.ContextID,
			Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History: []*a2a.Message{msg},
		},
		AgentID: agent.ID, PeerID: peer.ID, PeerLabel: peer.Label, Protocol: switchboard.ProtocolV1,
		CreatedAt: now, UpdatedAt: now,
	}
	change := &switchboard.TaskChange{MessageID: msg.ID}
	if agent.Mode.Live() {
		change.NewDeliveries = []*switchboard.Delivery{{
			ID: switchboard.NewID(), TaskID: t.ID(), AgentID: agent.ID, Kind: switchboard.DeliverTask, MessageID: msg.ID,
			State: switchboard.DeliveryQueued, Deadline: now.Add(switchboard.DefaultDeliveryDeadline), NextAttemptAt: now, CreatedAt: now,
		}}
	}
	return t, change
}

// seedAgent stores an account and an agent of it with the given mode.
func seedAgent(tb testing.TB, db *sqlstore.DB, mode switchboard.DeliveryMode) *switchboard.Agent {
	tb.Helper()
	return seedAgentNamed(tb, db, mode, "bench")
}

// seedAgentNamed is seedAgent with the agent's handle.
func seedAgentNamed(tb testing.TB, db *sqlstore.DB, mode switchboard.DeliveryMode, handle string) *switchboard.Agent {
	tb.Helper()
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: handle, Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		tb.Fatal(err)
	}
	agent := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Name: "Bench",
		Mode: mode, AcceptsTasks: true}
	if mode == switchboard.ModeWebhook {
		agent.Endpoint = "https://agent.example/hook"
	}
	if err := db.CreateAgent(ctx, agent); err != nil {
		tb.Fatal(err)
	}
	return agent
}
