package certs

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"testing"
	"time"

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
	limiter := newWindowLimit(10, time.Hour)
	d := &decider{
		own: map[string]bool{"base.test": true}, domains: []string{"base.test"},
		agentDomain: func(context.Context, string) (bool, error) { return true, nil },
		resolver:    NewResolver(ca.DNS), limiter: limiter, logger: slog.New(slog.DiscardHandler),
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

// TestOwnAddrsLookedUpAgain: the deployment's addresses are taken from
// DNS again once ownAddrsTTL has passed, so that a name moved to another
// address stops (or starts) getting certificates on demand.
func TestOwnAddrsLookedUpAgain(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	acmetest.SetA(t, "moved.test", "127.0.0.1")
	d := &decider{domains: []string{"moved.test"}, resolver: NewResolver(ca.DNS),
		interfaces: func() ([]netip.Addr, error) { return nil, errors.New("not asked") }}
	old := netip.MustParseAddr("192.0.2.9")
	d.ours, d.oursAt = []netip.Addr{old}, time.Now().Add(-ownAddrsTTL-time.Second)
	got, err := d.ownAddrs(context.Background())
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("ownAddrs after %s = %v, %v; want the address DNS gives now", ownAddrsTTL, got, err)
	}
	d.ours, d.oursAt = []netip.Addr{old}, time.Now()
	if got, err := d.ownAddrs(context.Background()); err != nil || len(got) != 1 || got[0] != old {
		t.Fatalf("ownAddrs within %s = %v, %v; want the addresses kept", ownAddrsTTL, got, err)
	}
}
