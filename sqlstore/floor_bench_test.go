package sqlstore_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// BenchmarkInboxWriteFloor sets, on SQLite, the CPU the process spends on
// a new inbox task's writes (the writer and the checkpointer; getrusage
// over the measured tasks, per task) against the least a durable inbox
// record could write:
//
//   - store: CreateTask as relay.Service.SendMessage calls it for an inbox
//     agent (the task, its first event, its message id, the peer's usage);
//   - floor: the task's row, keyed by its id, with the two orders its
//     reads need (an agent's tasks by state, a peer's tasks), and the
//     message id that keeps a resent message from making a second task
//     (WITHOUT ROWID): two statements on five b-trees, no event log, no
//     usage counts, the task's JSON (1.5 KiB) encoded once beforehand.
//
// Sixteen goroutines send, so that commits group as they do under load.
//
//	go test -run '^$' -bench InboxWriteFloor -benchtime 20000x ./sqlstore/
func BenchmarkInboxWriteFloor(b *testing.B) {
	ctx := context.Background()
	for _, kind := range []string{"store", "floor"} {
		b.Run(kind, func(b *testing.B) {
			db := MustOpenSQLite(b)
			agent := seedAgent(b, db, switchboard.ModeInbox)
			peer := switchboard.Peer{AgentID: agent.ID, ID: switchboard.NewID(), Label: "peer"}
			data := `{"id":"x","contextId":"y","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"role":"ROLE_USER","parts":[{"text":"` +
				kibText + `"}]}],` + strings.Repeat(" ", 400) + `}`
			if kind == "floor" {
				err := sqlstore.WriteInTx(ctx, db, func(tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, `CREATE TABLE floor_tasks (id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, peer_id TEXT NOT NULL,
						state TEXT NOT NULL, created_at BIGINT NOT NULL, data TEXT NOT NULL);
					CREATE INDEX floor_tasks_agent ON floor_tasks (agent_id, state, created_at, id);
					CREATE INDEX floor_tasks_peer ON floor_tasks (agent_id, peer_id, created_at, id);
					CREATE TABLE floor_messages (agent_id TEXT, peer_id TEXT, message_id TEXT, task_id TEXT NOT NULL,
						PRIMARY KEY (agent_id, peer_id, message_id)) WITHOUT ROWID`)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			write := func() {
				if kind == "store" {
					msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(kibText)}}
					t, change := acceptedTask(agent, peer, msg)
					if _, err := db.CreateTask(ctx, t, change); err != nil {
						b.Fatal(err)
					}
					return
				}
				id, msgID, now := switchboard.NewID(), switchboard.NewID(), time.Now().UnixNano()
				err := sqlstore.WriteInTx(ctx, db, func(tx *sql.Tx) error {
					if _, err := tx.ExecContext(ctx, `INSERT INTO floor_tasks VALUES ($1, $2, $3, 'TASK_STATE_SUBMITTED', $4, $5)`,
						id, agent.ID, peer.ID, now, data); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `INSERT INTO floor_messages VALUES ($1, $2, $3, $4)`, agent.ID, peer.ID, msgID, id)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			for range 2000 { // a store that has seen some traffic
				write()
			}
			before := cpuTime()
			b.SetParallelism(8) // 16 senders on two cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					write()
				}
			})
			b.StopTimer()
			if after := cpuTime(); after > 0 {
				b.ReportMetric(float64((after-before).Microseconds())/float64(b.N), "cpu-µs/task")
			}
		})
	}
}
