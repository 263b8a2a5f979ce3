package sqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// BenchmarkHelloWithBacklog measures what a connector's hello costs in the
// store (RequeueUnheld, run in SQLite's writer, which every other write
// waits for) for an agent back from a long absence: 20,000 tasks queued
// and never offered, and 50 it holds. On PostgreSQL (when
// SWITCHBOARD_TEST_POSTGRES is set) it runs in a transaction of its own.
func BenchmarkHelloWithBacklog(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchmarkHelloWithBacklog(b, MustOpenSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { benchmarkHelloWithBacklog(b, MustOpenPostgres(b)) })
}

func benchmarkHelloWithBacklog(b *testing.B, db *sqlstore.DB) {
	ctx := context.Background()
	agent := seedAgent(b, db, switchboard.ModeConnector)
	peer := switchboard.Peer{AgentID: agent.ID, ID: switchboard.NewID(), Label: "peer"}
	create := func(offered bool) (a2a.TaskID, error) {
		msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}
		t, change := acceptedTask(agent, peer, msg)
		if offered {
			d := change.NewDeliveries[0]
			now := time.Now().UTC()
			d.State, d.Holder, d.Attempts, d.OfferedAt = switchboard.DeliveryOffered, "conn-1", 1, &now
		}
		if _, err := db.CreateTask(ctx, t, change); err != nil || !offered {
			return t.ID(), err
		}
		_, _, err := db.ModifyTask(ctx, t.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) {
			return &switchboard.TaskChange{Ack: &switchboard.DeliveryAck{DeliveryID: change.NewDeliveries[0].ID, Holder: "conn-1"}}, nil
		})
		return t.ID(), err
	}
	var holding []a2a.TaskID
	for range 50 {
		id, err := create(true)
		if err != nil {
			b.Fatal(err)
		}
		holding = append(holding, id)
	}
	var wg sync.WaitGroup
	for range 8 { // as peers would: several at once (on PostgreSQL, each its own round trips)
		wg.Go(func() {
			for range 20_000 / 8 {
				if _, err := create(false); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	b.ResetTimer()
	for b.Loop() {
		n, err := db.RequeueUnheld(ctx, agent.ID, holding, time.Now().Add(time.Hour))
		if err != nil || n != 0 {
			b.Fatalf("requeued %d: %v", n, err)
		}
	}
}
