package ownerhttp_test

import (
	"bytes"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/outpeer"
)

// TestOutboundPeerRoutes: an owner syncs, lists and unsyncs an agent's
// aliases; the token is never in an answer; bad aliases, URLs and tokens
// are 400, a missing alias 404, another owner's agent 404.
func TestOutboundPeerRoutes(t *testing.T) {
	withPeers := func(guard netguard.Options) facetest.Option {
		return facetest.WithDeps(func(d *assembly.APIDeps) {
			d.OutboundPeers = outpeer.New(d.Agents.(switchboard.Store), front.ClientOptions{Guard: guard})
		})
	}
	h := facetest.New(t, withPeers(netguard.Options{}))
	alice, aliceToken := h.Account("alice")
	_, malloryToken := h.Account("mallory")
	h.AgentOf(alice, "helper")
	const secret = "sbp_never-shown-0123456789"

	put := func(token, alias string, body any) *facetest.Response {
		t.Helper()
		return h.Owner("PUT", "/agents/helper/peers/"+alias, token, body)
	}
	r := put(aliceToken, "bob", map[string]any{"url": "https://bob.example/a/bob/", "token": secret})
	if r.Status != http.StatusCreated || r.JSON["alias"] != "bob" || r.JSON["url"] != "https://bob.example/a/bob" || r.JSON["has_token"] != true {
		t.Fatalf("first PUT: %d %s", r.Status, r.Body)
	}
	if r = put(aliceToken, "bob", map[string]any{"url": "https://bob2.example", "token": secret + "2"}); r.Status != http.StatusOK {
		t.Fatalf("second PUT: %d %s", r.Status, r.Body)
	}
	r = h.Owner("GET", "/agents/helper/peers", aliceToken, nil)
	if r.Status != http.StatusOK || r.JSON["agent"] != "helper" || !bytes.Contains(r.Body, []byte(`"url":"https://bob2.example"`)) ||
		!bytes.Contains(r.Body, []byte(`"synced_at"`)) {
		t.Fatalf("GET: %d %s", r.Status, r.Body)
	}
	for _, b := range [][]byte{r.Body} {
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("an answer shows the token: %s", b)
		}
	}

	bad := map[string]struct {
		alias string
		body  any
	}{
		"AliasCharacters": {"b%20b", map[string]any{"url": "https://x.example", "token": "t"}},
		"AliasTooLong":    {strings.Repeat("a", 65), map[string]any{"url": "https://x.example", "token": "t"}},
		"PlainHTTP":       {"x", map[string]any{"url": "http://x.example", "token": "t"}},
		"PrivateHost":     {"x", map[string]any{"url": "https://10.0.0.7", "token": "t"}},
		"Loopback":        {"x", map[string]any{"url": "https://localhost:8443", "token": "t"}},
		"Credentials":     {"x", map[string]any{"url": "https://u:p@x.example", "token": "t"}},
		"NotAURL":         {"x", map[string]any{"url": "bob", "token": "t"}},
		"NoToken":         {"x", map[string]any{"url": "https://x.example", "token": " "}},
		"TokenControl":    {"x", map[string]any{"url": "https://x.example", "token": "a\nb"}},
		"UnknownField":    {"x", map[string]any{"url": "https://x.example", "token": "t", "allow_private": true}},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			if r := put(aliceToken, c.alias, c.body); r.Status != http.StatusBadRequest {
				t.Fatalf("PUT %s: %d %s", c.alias, r.Status, r.Body)
			}
		})
	}

	// Another owner's agent does not exist for it.
	if r := put(malloryToken, "bob", map[string]any{"url": "https://x.example", "token": "t"}); r.Status != http.StatusNotFound {
		t.Fatalf("another owner's PUT: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/agents/helper/peers", malloryToken, nil); r.Status != http.StatusNotFound {
		t.Fatalf("another owner's GET: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("DELETE", "/agents/helper/peers/bob", malloryToken, nil); r.Status != http.StatusNotFound {
		t.Fatalf("another owner's DELETE: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/agents/helper/peers", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("GET without a token: %d %s", r.Status, r.Body)
	}

	if r := h.Owner("DELETE", "/agents/helper/peers/bob", aliceToken, nil); r.Status != http.StatusOK || r.JSON["deleted"] != true {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("DELETE", "/agents/helper/peers/bob", aliceToken, nil); r.Status != http.StatusNotFound {
		t.Fatalf("DELETE again: %d %s", r.Status, r.Body)
	}

	// Plain http and private hosts where the operator opened the guard.
	open := facetest.New(t, withPeers(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
	open.Agent("helper")
	for _, u := range []string{"http://127.0.0.1:9000", "https://10.0.0.7/a/x"} {
		if r := open.Owner("PUT", "/agents/helper/peers/lab", open.OperatorToken, map[string]any{"url": u, "token": "t"}); r.Status/100 != 2 {
			t.Fatalf("PUT %s with the guard opened: %d %s", u, r.Status, r.Body)
		}
	}

	// Without the service: not found.
	off := facetest.New(t)
	off.Agent("helper")
	if r := off.Owner("GET", "/agents/helper/peers", off.OperatorToken, nil); r.Status != http.StatusNotFound {
		t.Fatalf("GET without synced aliases: %d %s", r.Status, r.Body)
	}
}
