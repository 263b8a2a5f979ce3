package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// loadSchema creates a schema of the tool's own in the PostgreSQL database
// at base and returns a URL whose search_path selects it, and a function
// that drops it.
func loadSchema(ctx context.Context, base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("-database: want a postgres:// URL, got %q", base)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("-database: %w", err)
	}
	defer conn.Close(context.Background())
	schema := "sbload_" + randomWord() + randomWord()
	if _, err := conn.Exec(cctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err == nil {
			_, err = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "drop schema %s: %v\n", schema, err)
		}
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}
