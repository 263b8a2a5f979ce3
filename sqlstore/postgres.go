package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgresOptions tunes a PostgreSQL store.
type PostgresOptions struct {
	// MaxConns bounds the open connections of this instance; 0 means 16.
	// One more connection listens for the changes other instances make
	// to agents, tokens, accounts and communities (identitylisten.go).
	MaxConns int
	// Logger receives the store's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Tracer, if set, is told of every statement the store's connections
	// send (BEGIN and COMMIT included): the benchmarks count them.
	Tracer pgx.QueryTracer
}

// migrationLockKey is the advisory lock that serialises migrations when
// several instances start at once.
const migrationLockKey = 0x5357_4244 // "SWBD"

// oauthClientsLockKey is the advisory lock that serialises registrations
// of OAuth clients, so that instances registering at once keep the
// deployment's limits (CreateOAuthClient).
const oauthClientsLockKey = 0x5357_4f43 // "SWOC"

// OpenPostgres connects to the PostgreSQL database at dsn (a postgres://
// URL or a key=value string, as libpq reads them; search_path selects a
// schema) and applies the migrations. Instances started together apply
// them one at a time, under an advisory lock.
//
// Reads and writes share one pool: PostgreSQL has no single writer, and
// rows are locked where a transaction reads to write (SELECT … FOR UPDATE,
// and FOR UPDATE SKIP LOCKED to claim deliveries).
func OpenPostgres(ctx context.Context, dsn string, opts PostgresOptions) (*DB, error) {
	cfg, err := pgconnConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Tracer = opts.Tracer
	pool := stdlib.OpenDB(*cfg)
	n := opts.MaxConns
	if n <= 0 {
		n = 16
	}
	pool.SetMaxOpenConns(n)
	pool.SetMaxIdleConns(n)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	db := &DB{
		write: pool,
		read:  pool,
		dialect: dialect{
			name:            "postgres",
			rowLocks:        true,
			migrationLock:   fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrationLockKey),
			uniqueViolation: postgresUniqueViolation,
			identityNotify:  notifyIdentitiesSQL,
		},
		Now:        time.Now,
		identities: newIdentityCache(),
	}
	if err := pool.PingContext(ctx); err != nil {
		_ = pool.Close()
		return nil, fmt.Errorf("open postgres %s: %w", redactDSN(cfg), err)
	}
	if err := db.migrate(ctx); err != nil {
		_ = pool.Close()
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	db.listener = startIdentityListener(cfg, db.identities, log)
	return db, nil
}

// postgresUniqueViolation reports a unique_violation (SQLSTATE 23505).
func postgresUniqueViolation(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

// pgconnConfig parses dsn, naming what is wrong without echoing a password.
func pgconnConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("open postgres: the connection string is not valid: %s", pe.Unwrap())
		}
		return nil, errors.New("open postgres: the connection string is not valid")
	}
	return cfg, nil
}

// redactDSN names the server and database of cfg, for error messages.
func redactDSN(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}
