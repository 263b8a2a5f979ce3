package server_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/switchboard-dev/switchboard/server"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// What outlives a test by design, none of it the server's: the
		// test DNS server of package acmetest (one per process), Pebble's
		// validation workers (Pebble has no way to stop them), and the
		// rate limiter certmagic keeps for each CA and account, for the
		// life of the process (certmagic has no way to stop it).
		goleak.IgnoreAnyFunction("github.com/miekg/dns.(*Server).ActivateAndServe"),
		goleak.IgnoreTopFunction("github.com/letsencrypt/pebble/v2/va.VAImpl.processTasks"),
		goleak.IgnoreAnyFunction("github.com/caddyserver/certmagic.(*RingBufferRateLimiter).loop"),
	)
}

// run starts a server of cfg on a free loopback port (with its data in a
// temporary directory unless cfg names one) and closes it when the test
// ends.
func run(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	s := server.New(cfg, slog.New(slog.DiscardHandler))
	if err := s.Run(context.Background()); err != nil {
		_ = s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}
