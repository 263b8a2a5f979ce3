package network_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// Size of the benchmark's network: what docs/performance.md's target
// names (10,000 agents in 100 communities).
const (
	benchAgents      = 10000
	benchCommunities = 100
	benchSkills      = 10
)

// benchStores open a real store of each engine; PostgreSQL skips without
// SWITCHBOARD_TEST_POSTGRES.
var benchStores = []struct {
	name string
	open func(tb testing.TB) *sqlstore.DB
}{
	{"sqlite", func(tb testing.TB) *sqlstore.DB {
		db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(tb))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		return db
	}},
	{"postgres", func(tb testing.TB) *sqlstore.DB {
		db, err := sqlstore.OpenPostgres(context.Background(), pgtest.DSN(tb), sqlstore.PostgresOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		return db
	}},
}

// seedNetwork stores benchAgents connected, approved agents, each in one of
// benchCommunities communities and offering one of benchSkills skills,
// with a few unfinished tasks each (so that the counts the policy reads
// are there), and returns an agent to send as.
func seedNetwork(b *testing.B, db *sqlstore.DB) *switchboard.Agent {
	b.Helper()
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "bench", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	sender := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "sender", Mode: switchboard.ModeConnector,
		AcceptsTasks: true, Approved: true}
	if err := db.CreateAgent(ctx, sender); err != nil {
		b.Fatal(err)
	}
	// The agents are written by several goroutines at once: PostgreSQL
	// then commits them in groups, which takes the seeding from minutes
	// to seconds.
	var next atomic.Int64
	errs := make(chan error, seedWorkers)
	var wg sync.WaitGroup
	for range seedWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= benchAgents {
					return
				}
				if err := seedAgent(ctx, db, acct, i, now); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return sender
}

// seedWorkers is how many goroutines seedNetwork writes with.
const seedWorkers = 16

// seedAgent stores the i-th agent of the benchmark's network: connected,
// in its community, with its skill and i mod 3 unfinished tasks.
func seedAgent(ctx context.Context, db *sqlstore.DB, acct *switchboard.Account, i int, now time.Time) error {
	skill := fmt.Sprintf("skill-%d", (i/benchCommunities)%benchSkills) // each community: 10 agents per skill
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: fmt.Sprintf("agent-%d", i),
		Mode: switchboard.ModeConnector, AcceptsTasks: true, Approved: true,
		Skills: []a2a.AgentSkill{{ID: skill, Name: skill, Tags: []string{"bench"}}}}
	if err := db.CreateAgent(ctx, g); err != nil {
		return err
	}
	if _, err := db.JoinCommunity(ctx, g.ID, fmt.Sprintf("c-%d", i%benchCommunities), true); err != nil {
		return err
	}
	if _, err := db.OpenSession(ctx, &switchboard.AgentSession{AgentID: g.ID, Holder: "conn/" + g.ID, InstanceID: "bench",
		ConnectedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		return err
	}
	for k := range i % 3 {
		msg := &a2a.Message{ID: fmt.Sprint("m", k), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}
		id := a2a.TaskID(switchboard.NewID())
		msg.TaskID = id
		t := &switchboard.Task{A2A: a2a.Task{ID: id, ContextID: "c", History: []*a2a.Message{msg},
			Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}, AgentID: g.ID, PeerID: "p", PeerLabel: "p",
			Protocol: switchboard.ProtocolV1, CreatedAt: now, UpdatedAt: now}
		if _, err := db.CreateTask(ctx, t, &switchboard.TaskChange{MessageID: msg.ID}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkDiscover measures discovery decisions (Service.Discover: from
// the question's view, checked against the store, ranked again in the
// background as it ages) in a network of 10,000 live agents in 100
// communities, the questions in turn: by community and skill (10
// candidates of 100 members), and by community alone (100 candidates).
// It reports the 99th percentile of the decisions as p99-ms, and the mean
// of each question's first decision, which waits for the store to rank
// its candidates, as first-ms; docs/performance.md records the numbers.
func BenchmarkDiscover(b *testing.B) {
	for _, st := range benchStores {
		b.Run(st.name, func(b *testing.B) {
			db := st.open(b)
			sender := seedNetwork(b, db)
			bus := membus.New()
			b.Cleanup(func() { _ = bus.Close() })
			n := network.New(db, relay.New(db, bus, slog.New(slog.NewTextHandler(io.Discard, nil))))
			n.HeartbeatInterval = time.Hour // the seeded sessions stay live
			ctx := context.Background()
			for _, q := range []struct{ name, skill string }{{"community+skill", "skill-3"}, {"community", ""}} {
				b.Run(q.name, func(b *testing.B) {
					question := func(i int) switchboard.DiscoveryQuery {
						return switchboard.DiscoveryQuery{Communities: []string{fmt.Sprintf("c-%d", i%benchCommunities)},
							SenderID: sender.ID, Skill: q.skill}
					}
					// The first decision of each question ranks its
					// candidates: timed apart, as first-ms.
					n.ViewTTL = time.Hour
					var first time.Duration
					for i := range benchCommunities {
						start := time.Now()
						if _, err := n.Discover(ctx, question(i)); err != nil {
							b.Fatal(err)
						}
						first += time.Since(start)
					}
					n.ViewTTL = network.DefaultViewTTL
					var lat []time.Duration
					i := 0
					for b.Loop() {
						start := time.Now()
						if _, err := n.Discover(ctx, question(i)); err != nil {
							b.Fatal(err)
						}
						i++
						lat = append(lat, time.Since(start))
					}
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(first.Microseconds())/1000/benchCommunities, "first-ms")
				})
			}
		})
	}
}
