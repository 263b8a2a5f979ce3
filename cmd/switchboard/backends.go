package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/natsbus"
	"github.com/switchboard-dev/switchboard/ratelimit"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// isPostgres reports whether the database setting names PostgreSQL.
func isPostgres(database string) bool {
	return strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://")
}

// openStore opens the configured store and says where it is, for the log.
func openStore(ctx context.Context, cfg Config) (*sqlstore.DB, string, error) {
	switch {
	case isPostgres(cfg.Database):
		db, err := sqlstore.OpenPostgres(ctx, cfg.Database, sqlstore.PostgresOptions{MaxConns: cfg.DatabaseMaxConns})
		return db, "postgres", err
	case cfg.Database != "":
		return nil, "", fmt.Errorf("--database: want a postgres:// URL (leave it empty for SQLite in the data directory), got %q", truncateFlag(cfg.Database))
	}
	path := filepath.Join(cfg.DataDir, "switchboard.db")
	db, err := sqlstore.OpenSQLite(ctx, path)
	return db, path, err
}

// openBus starts the configured bus, and for "embedded" its NATS server.
func (m *Main) openBus(cfg Config) error {
	opts := natsbus.Options{Prefix: cfg.BusPrefix, Logger: m.Logger}
	switch bus := strings.TrimSpace(cfg.Bus); {
	case bus == "" || bus == "memory":
		m.Bus = membus.New()
	case bus == "embedded":
		s, err := natsbus.StartServer(cfg.NATS)
		if err != nil {
			return err
		}
		m.nats = s
		b, err := natsbus.ConnectInProcess(s, opts)
		if err != nil {
			return err
		}
		m.Bus = b
		if cfg.NATS.Listen != "" || cfg.NATS.ClusterListen != "" {
			m.Logger.Info("embedded NATS server", "clients", s.ClientURL(), "cluster", cfg.NATS.ClusterListen, "routes", cfg.NATS.Routes)
		}
	case strings.HasPrefix(bus, "nats://") || strings.HasPrefix(bus, "tls://"):
		b, err := natsbus.Connect(bus, opts)
		if err != nil {
			return err
		}
		m.Bus = b
	default:
		return fmt.Errorf("--bus: want memory, embedded or nats:// URLs, got %q", truncateFlag(bus))
	}
	return nil
}

// newLimiter returns the per-peer rate limiter: counted in the shared
// database when there is one, so that a peer gets its limit once across
// instances; in memory otherwise.
func newLimiter(cfg Config, db *sqlstore.DB) switchboard.RateLimiter {
	if isPostgres(cfg.Database) {
		return ratelimit.NewShared(db, cfg.RatePerMinute, time.Minute)
	}
	return ratelimit.NewMemory(cfg.RatePerMinute, time.Minute)
}

// busName names the bus for the log.
func busName(bus string) string {
	switch {
	case bus == "" || bus == "memory":
		return "memory"
	case bus == "embedded":
		return "embedded nats"
	}
	return "nats"
}

// truncateFlag shortens a flag value for an error message; a URL may hold
// credentials, so only its first 12 characters are shown.
func truncateFlag(v string) string {
	if len(v) <= 12 {
		return v
	}
	return v[:12] + "…"
}
