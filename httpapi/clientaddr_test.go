package httpapi_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/pairing"
)

// TestPairingLimitBehindProxy: behind a trusted proxy (the test client's
// loopback address), the per-address limit on device authorization
// requests counts each forwarded client as itself, and the owner sees the
// forwarded address as the requester; a client whose connection is not a
// trusted proxy is counted as itself whatever X-Forwarded-For it writes.
func TestPairingLimitBehindProxy(t *testing.T) {
	lots := facetest.WithPairing(pairing.Config{MaxPending: 100, MaxPendingPerRequester: 100, MaxPerHour: 100}) // only the per-address limit
	ask := func(h *facetest.Harness, addr, forwardedFor string) *facetest.Response {
		t.Helper()
		return h.DeviceAuth(addr, url.Values{"client_id": {"c"}}, map[string]string{"X-Forwarded-For": forwardedFor})
	}

	t.Run("TrustedProxy", func(t *testing.T) {
		h := facetest.New(t, lots, facetest.WithConfig(func(c *httpapi.Config) {
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		}))
		addr := h.Addr(h.Agent("alice"))
		for i := range pairing.DefaultMaxPerRequester {
			for _, client := range []string{"198.51.100.1", "203.0.113.9, 198.51.100.2"} { // the second with a spoofed hop
				if r := ask(h, addr, client); r.Status != http.StatusOK {
					t.Fatalf("request %d of %s: %d %s", i, client, r.Status, r.Body)
				}
			}
		}
		facetest.WantOAuthError(t, ask(h, addr, "198.51.100.1"), http.StatusTooManyRequests, "slow_down")
		facetest.WantOAuthError(t, ask(h, addr, "1.1.1.1, 198.51.100.2"), http.StatusTooManyRequests, "slow_down")
		if r := ask(h, addr, "198.51.100.3"); r.Status != http.StatusOK {
			t.Fatalf("a third client: %d %s", r.Status, r.Body)
		}
		list := h.Owner("GET", "/agents/alice/pairings", h.OperatorToken, nil)
		if got := strings.Count(string(list.Body), `"requester":"198.51.100.2"`); got != pairing.DefaultMaxPerRequester {
			t.Fatalf("%d requests listed from 198.51.100.2, want %d: %s", got, pairing.DefaultMaxPerRequester, list.Body)
		}
	})

	t.Run("IPv6Network", func(t *testing.T) {
		// The hosts of one /64 count as one client, whatever address each
		// takes in it; the owner sees the network.
		h := facetest.New(t, lots, facetest.WithConfig(func(c *httpapi.Config) {
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		}))
		addr := h.Addr(h.Agent("alice"))
		for i := range pairing.DefaultMaxPerRequester {
			if r := ask(h, addr, fmt.Sprintf("2001:db8:1:2::%x", i+1)); r.Status != http.StatusOK {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
		}
		facetest.WantOAuthError(t, ask(h, addr, "2001:db8:1:2:ffff::1"), http.StatusTooManyRequests, "slow_down")
		if r := ask(h, addr, "2001:db8:1:3::1"); r.Status != http.StatusOK {
			t.Fatalf("another /64: %d %s", r.Status, r.Body)
		}
		list := h.Owner("GET", "/agents/alice/pairings", h.OperatorToken, nil)
		if got := strings.Count(string(list.Body), `"requester":"2001:db8:1:2::/64"`); got != pairing.DefaultMaxPerRequester {
			t.Fatalf("%d requests listed from 2001:db8:1:2::/64, want %d: %s", got, pairing.DefaultMaxPerRequester, list.Body)
		}
	})

	t.Run("SpoofingClient", func(t *testing.T) {
		h := facetest.New(t, lots, facetest.WithConfig(func(c *httpapi.Config) {
			c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		}))
		addr := h.Addr(h.Agent("alice"))
		for i := range pairing.DefaultMaxPerRequester {
			if r := ask(h, addr, "198.51.100."+string(rune('1'+i))); r.Status != http.StatusOK {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
		}
		facetest.WantOAuthError(t, ask(h, addr, "198.51.100.99"), http.StatusTooManyRequests, "slow_down")
		list := h.Owner("GET", "/agents/alice/pairings", h.OperatorToken, nil)
		if strings.Contains(string(list.Body), "198.51.100.") {
			t.Fatalf("a spoofed address was recorded: %s", list.Body)
		}
	})
}
