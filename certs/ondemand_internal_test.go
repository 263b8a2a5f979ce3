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

// TestDecide: the on-demand decision gives a name a certificate only if
// an agent holds it and it resolves to the deployment's addresses; a new
// certificate counts against the limit, one in the store already does
// not; the deployment's own names are always allowed. It resolves with a
// real DNS server on loopback (package acmetest's).
func TestDecide(t *testing.T) {
	ca := acmetest.Start(t, acmetest.Options{})
	acmetest.SetA(t, "elsewhere.test", "192.0.2.7")
	acmetest.SetA(t, "other-ip.test", "127.0.0.1", "192.0.2.8")
	agents := map[string]bool{"bot.test": true, "elsewhere.test": true, "other-ip.test": true, "stored.test": true, "third.test": true}
	limiter := newWindowLimit(2, time.Hour)
	d := &decider{
		own: map[string]bool{"base.test": true}, domains: []string{"base.test"},
		agentDomain: func(_ context.Context, name string) (bool, error) {
			if name == "broken.test" {
				return false, errors.New("store down")
			}
			return agents[name], nil
		},
		resolver: NewResolver(ca.DNS), limiter: limiter, logger: slog.New(slog.DiscardHandler),
		stored: func(_ context.Context, name string) bool { return name == "stored.test" },
		interfaces: func() ([]netip.Addr, error) {
			t.Fatal("the deployment's names resolve: no need of the interfaces")
			return nil, nil
		},
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		want error
	}{
		{"base.test", nil},
		{"unknown.test", errNotAgentDomain},
		{"elsewhere.test", errNotHere},
		{"broken.test", nil},   // an error of its own, below
		{"bot.test", nil},      // first of the limit of 2
		{"stored.test", nil},   // in the store: free
		{"other-ip.test", nil}, // one of its addresses is the deployment's: second of the limit
		{"third.test", errOnDemandLimited},
		{"192.0.2.1", nil}, // not a name: an error of its own
	} {
		err := d.decide(ctx, tc.name)
		switch {
		case tc.name == "broken.test" || tc.name == "192.0.2.1":
			if err == nil {
				t.Errorf("%s: allowed", tc.name)
			}
		case !errors.Is(err, tc.want) || (tc.want == nil && err != nil):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestOwnAddrsFallBack: when the deployment's names resolve to nothing,
// the machine's interfaces are the deployment's addresses.
func TestOwnAddrsFallBack(t *testing.T) {
	acmetest.SetA(t, "nothing.test", "not an address") // answers no A record
	d := &decider{domains: []string{"nothing.test"}, resolver: NewResolver(acmetest.Start(t, acmetest.Options{}).DNS),
		interfaces: func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil }}
	got, err := d.ownAddrs(context.Background())
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("ownAddrs = %v, %v", got, err)
	}
}
