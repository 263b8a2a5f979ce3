package sqlstore_test

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// BenchmarkTaskWrites makes the store calls of a task as relay.Service
// makes them with its default quotas, one task after another as a lone
// peer's, and counts what each task writes:
//
//   - route: a task for a connected connector agent, created with its
//     delivery already offered, then the agent's final answer written with
//     the delivery's acknowledgement;
//   - inbox: a task for an inbox agent (with its wake request, which an
//     agent without a wake configuration does not keep).
//
// On SQLite it reports wal-frames/op, the pages appended to the WAL per
// task: the checkpointer is stopped and the WAL truncated before the
// counted tasks, whose frames are then the WAL file's size over a frame's
// (a 24-byte header and a page). On PostgreSQL (SWITCHBOARD_TEST_POSTGRES)
// it reports statements/op, every statement a connection sends (BEGIN and
// COMMIT included: each is a round trip), and transactions/op (a statement
// outside BEGIN … COMMIT is one of its own).
//
//	go test -run '^$' -bench TaskWrites -benchtime 200x ./sqlstore/
func BenchmarkTaskWrites(b *testing.B) {
	for _, kind := range []string{"route", "route-once", "inbox"} {
		b.Run("sqlite/"+kind, func(b *testing.B) {
			ctx := context.Background()
			path := sqlitetest.Path(b)
			db, err := sqlstore.OpenSQLite(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			sqlstore.StopCheckpoints(db)
			raw, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				b.Fatal(err)
			}
			defer raw.Close()
			task := taskWrites(b, db, kind)
			for range 200 { // a store that has seen some traffic
				task()
			}
			var pageSize int64
			if err := raw.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
				b.Fatal(err)
			}
			if _, err := raw.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				task()
			}
			b.StopTimer()
			fi, err := os.Stat(path + "-wal")
			if err != nil {
				b.Fatal(err)
			}
			if frames := (fi.Size() - 32) / (pageSize + 24); frames > 0 {
				b.ReportMetric(float64(frames)/float64(b.N), "wal-frames/op")
			}
			logFramesByTree(b, raw, path+"-wal", pageSize)
		})
		b.Run("postgres/"+kind, func(b *testing.B) {
			var n statementCounter
			db, err := sqlstore.OpenPostgres(context.Background(), pgtest.DSN(b), sqlstore.PostgresOptions{Tracer: &n})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			task := taskWrites(b, db, kind)
			for range 200 {
				task()
			}
			n.statements.Store(0)
			n.transactions.Store(0)
			b.ResetTimer()
			for b.Loop() {
				task()
			}
			b.StopTimer()
			b.ReportMetric(float64(n.statements.Load())/float64(b.N), "statements/op")
			b.ReportMetric(float64(n.transactions.Load())/float64(b.N), "transactions/op")
		})
	}
}

// logFramesByTree logs, with -v, the frames per task of each b-tree (table
// or index, leaf or interior page) from the WAL at wal: each frame's header
// names its page, and SQLite's dbstat table the b-tree that holds it.
func logFramesByTree(b *testing.B, raw *sql.DB, wal string, pageSize int64) {
	if !testing.Verbose() {
		return
	}
	data, err := os.ReadFile(wal)
	if err != nil {
		b.Fatal(err)
	}
	frames := map[uint32]int{}
	for off := int64(32); off+24+pageSize <= int64(len(data)); off += 24 + pageSize {
		frames[binary.BigEndian.Uint32(data[off:])]++
	}
	rows, err := raw.Query(`SELECT name, pageno, pagetype FROM dbstat`)
	if err != nil {
		b.Fatal(err)
	}
	tree := map[uint32]string{1: "page 1"}
	for rows.Next() {
		var name, kind string
		var page uint32
		if err := rows.Scan(&name, &page, &kind); err != nil {
			b.Fatal(err)
		}
		if page != 1 {
			tree[page] = name + " " + kind
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	byTree := map[string]int{}
	for page, n := range frames {
		name := tree[page]
		if name == "" {
			name = "free or new"
		}
		byTree[name] += n
	}
	names := slices.SortedFunc(maps.Keys(byTree), func(a, c string) int { return cmp.Or(byTree[c]-byTree[a], strings.Compare(a, c)) })
	for _, name := range names {
		b.Logf("%-45s %5.2f frames/op", name, float64(byTree[name])/float64(b.N))
	}
}

// taskWrites returns a function that makes one task of kind (route or
// inbox) in db as relay.Service does.
func taskWrites(tb testing.TB, db *sqlstore.DB, kind string) func() {
	ctx := context.Background()
	mode := switchboard.ModeConnector
	if kind == "inbox" {
		mode = switchboard.ModeInbox
	}
	agent := seedAgent(tb, db, mode)
	peer := switchboard.Peer{AgentID: agent.ID, ID: switchboard.NewID(), Label: "peer"}
	quota := func() *switchboard.PeerQuota {
		return &switchboard.PeerQuota{MaxOpenTasks: relay.DefaultMaxOpenTasksPerPeer, MaxBytes: relay.DefaultMaxPeerBytes}
	}
	return func() {
		msg := &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(kibText)}}
		t, change := acceptedTask(agent, peer, msg)
		change.Quota, change.MaxBytes = quota(), switchboard.MaxTaskBytes
		if kind == "inbox" {
			change.Wake = &switchboard.WakeRequest{AgentID: agent.ID, PeerID: peer.ID, ContextID: t.A2A.ContextID, TaskID: t.ID(),
				Kind: switchboard.WakeInbound, From: peer.Label, Message: msg}
			if _, err := db.CreateTask(ctx, t, change); err != nil {
				tb.Fatal(err)
			}
			return
		}
		if kind == "route-once" {
			// Sent before it is written, and written once with the
			// agent's answer, which acknowledges its offer: no delivery.
			created := t.A2A
			answer := a2a.NewStatusUpdateEvent(&t.A2A, a2a.TaskStateCompleted,
				&a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(kibText)}})
			t.A2A.Status = answer.Status
			change.NewDeliveries, change.OfferSent, change.Created, change.Events = nil, true, &created, []a2a.Event{answer}
			if _, err := db.CreateTask(ctx, t, change); err != nil {
				tb.Fatal(err)
			}
			return
		}
		d := change.NewDeliveries[0]
		now := time.Now().UTC()
		d.State, d.Holder, d.Attempts, d.OfferedAt = switchboard.DeliveryOffered, "conn-1", 1, &now
		if _, err := db.CreateTask(ctx, t, change); err != nil {
			tb.Fatal(err)
		}
		answer := a2a.NewStatusUpdateEvent(&t.A2A, a2a.TaskStateCompleted,
			&a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(kibText)}})
		_, _, err := db.ModifyTask(ctx, t.ID(), func(t *switchboard.Task) (*switchboard.TaskChange, error) {
			t.A2A.Status = answer.Status
			return &switchboard.TaskChange{Events: []a2a.Event{answer}, Ack: &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: "conn-1"},
				MaxBytes: switchboard.MaxTaskBytes}, nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// statementCounter counts the statements sent on PostgreSQL connections,
// and the transactions they make.
type statementCounter struct {
	statements, transactions atomic.Int64
	inTx                     sync.Map // *pgx.Conn → true between BEGIN and COMMIT or ROLLBACK
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.statements.Add(1)
	sql := strings.ToLower(strings.TrimSpace(data.SQL))
	switch {
	case strings.HasPrefix(sql, "begin"):
		c.inTx.Store(conn, true)
		c.transactions.Add(1)
	case sql == "commit" || sql == "rollback":
		c.inTx.Delete(conn)
	default:
		if _, ok := c.inTx.Load(conn); !ok {
			c.transactions.Add(1)
		}
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
