package sqlstore_test

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync/atomic"
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
//     usage counts, the task's JSON (1.5 KiB) encoded once beforehand;
//   - kept: the floor and what the store keeps beyond it, written as plain
//     statements: the first event (the task's JSON again), the message
//     ids in a table of their own with an index by task, the index of
//     unfinished tasks, the peer's usage counts. Four statements on
//     eleven b-trees, as the store's; what the store takes beyond this is
//     its own work in Go (the task encoded, the agent checked, quotas).
//
// A hundred agents with a peer each take the tasks in turn, and sixteen
// goroutines send, as the load tool's inbox scenario does, so that commits
// group as they do under load and each lands on the b-trees' pages as
// there.
//
//	go test -run '^$' -bench InboxWriteFloor -benchtime 20000x ./sqlstore/
func BenchmarkInboxWriteFloor(b *testing.B) {
	const agents = 100
	ctx := context.Background()
	for _, kind := range []string{"store", "kept", "floor"} {
		b.Run(kind, func(b *testing.B) {
			db := MustOpenSQLite(b)
			type pair struct {
				agent *switchboard.Agent
				peer  switchboard.Peer
			}
			pairs := make([]pair, agents)
			for i := range pairs {
				a := seedAgentNamed(b, db, switchboard.ModeInbox, "bench-"+strconv.Itoa(i))
				pairs[i] = pair{a, switchboard.Peer{AgentID: a.ID, ID: switchboard.NewID(), Label: "peer"}}
			}
			var turn atomic.Int64
			data := `{"id":"x","contextId":"y","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"role":"ROLE_USER","parts":[{"text":"` +
				kibText + `"}]}],` + strings.Repeat(" ", 400) + `}`
			if kind != "store" {
				ddl := `CREATE TABLE floor_tasks (id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, peer_id TEXT NOT NULL,
						state TEXT NOT NULL, created_at BIGINT NOT NULL, data TEXT NOT NULL);
					CREATE INDEX floor_tasks_agent ON floor_tasks (agent_id, state, created_at, id);
					CREATE INDEX floor_tasks_peer ON floor_tasks (agent_id, peer_id, created_at, id);`
				if kind == "floor" {
					ddl += `CREATE TABLE floor_messages (agent_id TEXT, peer_id TEXT, message_id TEXT, task_id TEXT NOT NULL,
						PRIMARY KEY (agent_id, peer_id, message_id)) WITHOUT ROWID;`
				} else {
					ddl += `CREATE TABLE floor_messages (agent_id TEXT, peer_id TEXT, message_id TEXT, task_id TEXT NOT NULL,
						PRIMARY KEY (agent_id, peer_id, message_id));
					CREATE INDEX floor_messages_task ON floor_messages (task_id);
					CREATE INDEX floor_tasks_unfinished ON floor_tasks (state) WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
					CREATE TABLE floor_events (task_id TEXT NOT NULL, seq BIGINT NOT NULL, created_at BIGINT NOT NULL, data TEXT NOT NULL,
						PRIMARY KEY (task_id, seq));
					CREATE TABLE floor_usage (agent_id TEXT NOT NULL, peer_id TEXT NOT NULL, open_tasks BIGINT NOT NULL, bytes BIGINT NOT NULL,
						PRIMARY KEY (agent_id, peer_id));`
				}
				err := sqlstore.WriteInTx(ctx, db, func(tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, ddl)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			write := func() {
				p := pairs[turn.Add(1)%agents]
				if kind == "store" {
					msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(kibText)}}
					t, change := acceptedTask(p.agent, p.peer, msg)
					if _, err := db.CreateTask(ctx, t, change); err != nil {
						b.Fatal(err)
					}
					return
				}
				id, msgID, now := switchboard.NewID(), switchboard.NewID(), time.Now().UnixNano()
				err := sqlstore.WriteInTx(ctx, db, func(tx *sql.Tx) error {
					if kind == "kept" {
						if _, err := tx.ExecContext(ctx, `INSERT INTO floor_events VALUES ($1, 1, $2, $3)`, id, now, data); err != nil {
							return err
						}
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO floor_messages VALUES ($1, $2, $3, $4)`, p.agent.ID, p.peer.ID, msgID, id); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO floor_tasks VALUES ($1, $2, $3, 'TASK_STATE_SUBMITTED', $4, $5)`,
						id, p.agent.ID, p.peer.ID, now, data); err != nil {
						return err
					}
					if kind == "kept" {
						_, err := tx.ExecContext(ctx, `INSERT INTO floor_usage VALUES ($1, $2, 1, $3)
							ON CONFLICT (agent_id, peer_id) DO UPDATE SET open_tasks = open_tasks + 1, bytes = bytes + excluded.bytes`,
							p.agent.ID, p.peer.ID, len(data))
						return err
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			for range 2000 { // a store that has seen some traffic
				write()
			}
			before, io := cpuTime(), ioBefore()
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
			io.report(b)
		})
	}
}

// ioCount holds this process's read calls (/proc/self/io) at a start.
type ioCount struct {
	reads int64
	ok    bool
}

// ioBefore reads the process's read calls, where the system tells them.
func ioBefore() ioCount {
	c, ok := readProcIO()
	return ioCount{c["syscr"], ok}
}

// report reports the read calls since the start per task: the pages the
// writer reads again, and those the checkpointer copies.
func (c ioCount) report(b *testing.B) {
	if after, ok := readProcIO(); c.ok && ok {
		b.ReportMetric(float64(after["syscr"]-c.reads)/float64(b.N), "read-calls/task")
	}
}
