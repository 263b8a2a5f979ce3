package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/server"
)

// TestSecretKeyRotationAndMismatch: a webhook secret written by a server is
// kept sealed; after `secret-key rotate` the next start seals it again with
// the new key and still reads it; a start with a key file that holds none
// of the keys that sealed it is refused, saying which key it lacks.
func TestSecretKeyRotationAndMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	start := func() (*server.Server, error) {
		m := server.New(server.Config{Addr: "127.0.0.1:0", DataDir: dir}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err := m.Run(context.Background()); err != nil {
			_ = m.Close()
			return nil, err
		}
		return m, nil
	}
	m, err := start()
	must(t, err)
	ctx := context.Background()
	op := operatorOf(t, m)
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: op.ID, Handle: "hooked", Mode: switchboard.ModeWebhook,
		Endpoint: "https://hook.example", WebhookSecret: "sbw_the-secret-itself", AcceptsTasks: true}
	must(t, m.DB.CreateAgent(ctx, g))
	first := m.DB.Secrets.(*seal.Keyring).CurrentID()
	must(t, m.Close())
	if db, _ := os.ReadFile(filepath.Join(dir, "switchboard.db")); bytes.Contains(db, []byte("the-secret-itself")) {
		t.Fatal("the webhook secret is in the database file as it is")
	}

	var out bytes.Buffer
	must(t, run(ctx, []string{"--data", dir, "secret-key", "rotate"}, &out))
	m, err = start()
	must(t, err)
	ring := m.DB.Secrets.(*seal.Keyring)
	if ring.CurrentID() == first || !strings.Contains(out.String(), ring.CurrentID()) {
		t.Fatalf("after rotate: current key %s (was %s); rotate said %q", ring.CurrentID(), first, out.String())
	}
	got, err := m.DB.FindAgentByID(ctx, g.ID)
	if err != nil || got.WebhookSecret != g.WebhookSecret {
		t.Fatalf("after rotation: %v, %v", got, err)
	}
	must(t, m.Close())

	must(t, os.WriteFile(filepath.Join(dir, seal.KeyFileName), []byte(seal.FormatKeys([][]byte{seal.NewKey()})), 0o600))
	if _, err := start(); err == nil || !strings.Contains(err.Error(), "sealed with key "+ring.CurrentID()) {
		t.Fatalf("a start with foreign keys: %v", err)
	}
}
