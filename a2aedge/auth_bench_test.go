package a2aedge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/pgtest"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// benchStores open a real store of each engine for one benchmark; the
// PostgreSQL one skips without SWITCHBOARD_TEST_POSTGRES.
var benchStores = []struct {
	name string
	open func(tb testing.TB) *sqlstore.DB
}{
	{"sqlite", func(tb testing.TB) *sqlstore.DB {
		tb.Helper()
		db, err := sqlstore.OpenSQLite(context.Background(), sqlitetest.Path(tb))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		return db
	}},
	{"postgres", func(tb testing.TB) *sqlstore.DB {
		tb.Helper()
		db, err := sqlstore.OpenPostgres(context.Background(), pgtest.DSN(tb), sqlstore.PostgresOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		return db
	}},
}

// BenchmarkAuthenticatePeer measures the peer token check every call to an
// address makes: the bearer token read from the header, hashed, looked up
// in a real store among an agent's hundred peer tokens, and checked.
func BenchmarkAuthenticatePeer(b *testing.B) {
	for _, st := range benchStores {
		b.Run(st.name, func(b *testing.B) {
			ctx := context.Background()
			db := st.open(b)
			s := New(httpapi.NewEnv(httpapi.EnvDeps{Tokens: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, httpapi.Config{}), Deps{})
			agent := seedBenchAgent(b, db)
			var secret string
			for i := range 100 {
				sec, hash := switchboard.NewToken(switchboard.TokenPeer)
				tok := &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: agent.ID, Label: fmt.Sprint("peer-", i)}
				if err := db.CreateToken(ctx, tok, false); err != nil {
					b.Fatal(err)
				}
				secret = sec
			}
			r := httptest.NewRequest("POST", "/a/"+agent.Handle, nil)
			r.Header.Set("Authorization", "Bearer "+secret)
			b.ReportAllocs()
			for b.Loop() {
				c, err := s.authenticateCaller(r, rpcTarget{agent: agent})
				if err != nil {
					b.Fatal(err)
				}
				if c.peer.Label != "peer-99" {
					b.Fatalf("authenticated as %q", c.peer.Label)
				}
			}
		})
	}
}

// seedBenchAgent stores an account and an inbox agent of it.
func seedBenchAgent(tb testing.TB, db *sqlstore.DB) *switchboard.Agent {
	tb.Helper()
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "bench", Role: switchboard.RoleOwner}
	if err := db.CreateAccount(ctx, acct); err != nil {
		tb.Fatal(err)
	}
	agent := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "bench", Name: "Bench",
		Mode: switchboard.ModeInbox, AcceptsTasks: true}
	if err := db.CreateAgent(ctx, agent); err != nil {
		tb.Fatal(err)
	}
	return agent
}
