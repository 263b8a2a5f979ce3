package certs

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/switchboard-dev/switchboard/internal/acmetest"
)

// TestDecideRefusesWhatIsNoDomain: a name that is not a domain (an IP
// literal, which resolves to itself) gets no certificate on demand even
// if the agents' lookup said yes and it is the deployment's address; and
// a manager without the agents' lookup gives none but for its own names.
func TestDecideRefusesWhatIsNoDomain(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	acmetest.SetA(t, "base.test", "127.0.0.1")
	acmetest.SetA(t, "bot.test", "127.0.0.1")
	limiter := certmagic.NewRateLimiter(10, time.Hour)
	defer limiter.Stop()
	d := &decider{
		own: map[string]bool{"base.test": true}, domains: []string{"base.test"},
		agentDomain: func(context.Context, string) (bool, error) { return true, nil },
		resolver:    newResolver(ca.DNS), limiter: limiter, logger: slog.New(slog.DiscardHandler),
		interfaces: func() ([]netip.Addr, error) { return nil, errors.New("not asked") },
		stored:     func(context.Context, string) bool { return true }, // past the limiter
	}
	ctx := context.Background()
	if err := d.decide(ctx, "bot.test"); err != nil {
		t.Fatalf("an agent's domain that points here: %v", err)
	}
	if err := d.decide(ctx, "127.0.0.1"); err == nil {
		t.Error("a certificate on demand for an IP literal")
	}
	d.agentDomain = nil
	if err := d.decide(ctx, "bot.test"); !errors.Is(err, errNotAgentDomain) {
		t.Errorf("without the agents' lookup: %v, want %v", err, errNotAgentDomain)
	}
	if err := d.decide(ctx, "base.test"); err != nil {
		t.Errorf("the deployment's own name: %v", err)
	}
}
