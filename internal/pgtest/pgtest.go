package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/switchboard-dev/switchboard"
)

// EnvVar names the variable that holds the test database's URL, for
// example postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvVar = "SWITCHBOARD_TEST_POSTGRES"

// DSN creates a new schema for the test and returns a connection URL whose
// search_path selects it; the schema is dropped when the test ends. Without
// SWITCHBOARD_TEST_POSTGRES the test is skipped, saying so; .ci/run always
// sets it.
func DSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvVar)
	if base == "" {
		tb.Skipf("%s is not set: no PostgreSQL to test against (.ci/run sets it)", EnvVar)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("%s=%s: %v", EnvVar, base, err)
	}
	defer conn.Close(ctx)
	schema := "sbtest_" + strings.ReplaceAll(switchboard.NewID(), "-", "")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(tb, base, schema)
}

// withSearchPath adds search_path=schema to a postgres:// URL.
func withSearchPath(tb testing.TB, base, schema string) string {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("%s must be a postgres:// URL, got %q", EnvVar, base)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return fmt.Sprint(u)
}
