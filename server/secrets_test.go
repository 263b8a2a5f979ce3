package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// TestMissingKeyLeavesNothing: a server started without the key that
// sealed its store's secrets is refused, and writes no key file of its
// own: the next start, with the key put back, works as before.
func TestMissingKeyLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s := run(t, server.Config{DataDir: dir})
	ctx := context.Background()
	all, err := s.DB.FindAccounts(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("accounts: %v %v", all, err)
	}
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: all[0].ID, Handle: "hooked", Mode: switchboard.ModeWebhook,
		Endpoint: "https://hook.example", WebhookSecret: "sbw_sealed-with-the-first-key", AcceptsTasks: true}
	if err := s.DB.CreateAgent(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, seal.KeyFileName)
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}

	again := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dir}, slog.New(slog.DiscardHandler))
	err = again.Run(ctx)
	_ = again.Close()
	if err == nil || !strings.Contains(err.Error(), "which this server was not given") {
		t.Fatalf("a start without the key: %v", err)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Fatalf("a refused start wrote %s (%v): the next start would use its useless key", keyFile, err)
	}

	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	restored := run(t, server.Config{DataDir: dir})
	got, err := restored.DB.FindAgentByID(ctx, g.ID)
	if err != nil || got.WebhookSecret != g.WebhookSecret {
		t.Fatalf("with the key put back: %v %v", got, err)
	}
}
