package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
)

// TestOneServerPerDataDirectory: a second server on the data directory
// of a running one (SQLite) refuses to start, and starts once the first
// has stopped.
func TestOneServerPerDataDirectory(t *testing.T) {
	dir := t.TempDir()
	first := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dir}, slog.New(slog.DiscardHandler))
	if err := first.Run(context.Background()); err != nil {
		_ = first.Close()
		t.Fatal(err)
	}
	second := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dir}, slog.New(slog.DiscardHandler))
	err := second.Run(context.Background())
	_ = second.Close()
	if err == nil || !strings.Contains(err.Error(), "another switchboard") {
		t.Fatalf("second server on the same data directory: err = %v, want it refused", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	run(t, server.Config{DataDir: dir}) // the lock went with the first server
}
