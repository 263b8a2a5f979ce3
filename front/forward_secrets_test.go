package front

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestForwarderRemovesReflectedCredentials: an upstream that reflects the
// headers it is sent (the front's bearer and fixed headers) into its
// answers relays none of their values to the peer, in any form: not in
// status messages, artifacts (text, file bytes and names, data) or
// metadata, streamed or not, in 1.0 and 0.3, on a first message or a
// follow-up.
func TestForwarderRemovesReflectedCredentials(t *testing.T) {
	for name, tt := range map[string]struct {
		version   string
		streaming bool
	}{"V1Streaming": {"1.0", true}, "V1Blocking": {"1.0", false}, "V03Streaming": {"0.3", true}, "V03Blocking": {"0.3", false}} {
		t.Run(name, func(t *testing.T) {
			u := newReflector(t, tt.version, tt.streaming)
			fw := forwarderTo(t, u, testCreds)
			msg := func(id, text string) *a2a.Message {
				return &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
			}
			first := forward(t, fw, msg("m1", "ask"), nil)
			second := forward(t, fw, msg("m2", "blue"), first)
			relayed := append(first.events, second.events...)
			if len(second.events) == 0 || first.failure != "" || second.failure != "" {
				t.Fatalf("relayed %d then %d events (failures %q %q)", len(first.events), len(second.events), first.failure, second.failure)
			}
			all := strings.Join(relayed, "\n")
			if leak := showsSecret(all); leak != "" {
				t.Fatalf("a credential reached the peer (%q):\n%s", leak, all)
			}
			if !strings.Contains(all, CredentialRemoved) || !strings.Contains(all, "you sent") {
				t.Fatalf("the upstream's answers did not come through, marked:\n%s", all)
			}
		})
	}
}

// TestCardRemovesReflectedCredentials: the card of an upstream that
// reflects the headers it is sent holds none of the front's credential
// values once read for the public address, names the credentials it held
// (Card.Reflected) and passes the leak check; read without the
// credentials' values, it would have shown them.
func TestCardRemovesReflectedCredentials(t *testing.T) {
	for _, version := range []string{"1.0", "0.3"} {
		t.Run(version, func(t *testing.T) {
			u := newReflector(t, version, true)
			target := u.srv.URL + "/invoke"
			client, err := NewClient(loopbackTransport(u.srv, 0), target, testCreds)
			if err != nil {
				t.Fatal(err)
			}
			var cache CardCache
			card, st := cache.GetWith(t.Context(), client, target, "", reflectorPublic, CredentialSecrets(testCreds))
			if card == nil {
				t.Fatalf("no card: %+v", st)
			}
			raw := []byte(jsonText(t, card))
			if leak := showsSecret(string(raw)); leak != "" {
				t.Fatalf("the card shows %q: %s", leak, raw)
			}
			if !strings.Contains(string(raw), CredentialRemoved) {
				t.Fatalf("the card lost what it said: %s", raw)
			}
			if got, want := card.Reflected, []string{"bearer", "header CF-Access-Client-Secret", "header X-Basic"}; !slices.Equal(got, want) {
				t.Errorf("Reflected = %q, want %q", got, want)
			}
			if leaks := Leaks(raw, card.Scrubber()); len(leaks) != 0 {
				t.Errorf("the card as served leaks %q", leaks)
			}
			// The same card read without the values to remove shows them:
			// the upstream does reflect them.
			plain, _ := cache.Get(t.Context(), client, target, "", reflectorPublic)
			raw = []byte(jsonText(t, plain))
			if showsSecret(string(raw)) == "" {
				t.Fatalf("the reflector reflected nothing: %s", raw)
			}
		})
	}
}

// reflectorPublic is the public address of a reflector's front.
const reflectorPublic = "https://sb.example.net/a/reflected"

// TestForwarderFailureHidesCredentials: an upstream whose error reflects
// the credentials it was sent (and a URL with a key in its query) fails
// the task with a reason that shows neither: a connector's peer reads it.
func TestForwarderFailureHidesCredentials(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		msg := "refused " + r.Header.Get("Authorization") + " at https://up.example/a2a?api_key=query-secret-0123"
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":`+strconv.Quote(msg)+`}}`)
	}))
	defer srv.Close()
	u := &reflector{srv: srv}
	fw := forwarderTo(t, u, testCreds)
	var reason string
	err := fw.Handle(t.Context(), &Job{TaskID: "t", ContextID: "c", NewTask: true, From: "bob",
		Message: &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}},
		Update:  func(a2a.Event) error { return nil }, Fail: func(r string, _ error) { reason = r }})
	if err == nil || !strings.Contains(reason, "refused") {
		t.Fatalf("Handle = %v, reason %q: want the upstream's refusal", err, reason)
	}
	if leak := showsSecret(reason); leak != "" || strings.Contains(reason, "query-secret") {
		t.Fatalf("the reason shows a secret: %q", reason)
	}
}
