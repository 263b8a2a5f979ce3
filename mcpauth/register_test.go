package mcpauth_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/mcpauth"
)

// registerFrom registers a client from the address and returns it, or
// the error.
func (w *world) registerFrom(from string) (*switchboard.OAuthClient, error) {
	return w.svc.Register(context.Background(), []byte(`{"client_name":"c","redirect_uris":["http://127.0.0.1/callback"]}`), from)
}

// TestRegisterFairShare: ten addresses A..J, each registering as many
// clients as RegistrationsPerHour allows, fill the table of MaxClients
// (with the world's own client, one of them gives a client up); an
// eleventh address K still registers and its user consents, while each of
// the ten stays refused for the hour.
func TestRegisterFairShare(t *testing.T) {
	w := newWorld(t, mcpauth.Config{}, nil)
	ctx := context.Background()
	for a := range 10 {
		from := fmt.Sprintf("198.51.100.%d", a)
		for i := range mcpauth.RegistrationsPerHour {
			if _, err := w.registerFrom(from); err != nil {
				t.Fatalf("address %d, registration %d: %v", a, i+1, err)
			}
		}
		if _, err := w.registerFrom(from); switchboard.ErrorCode(err) != switchboard.ERATELIMITED {
			t.Fatalf("address %d past its share: %v, want ERATELIMITED", a, err)
		}
	}
	k, err := w.registerFrom("203.0.113.7")
	if err != nil {
		t.Fatalf("K, after A..J registered their share: %v", err)
	}
	req, err := w.svc.CheckRequest(ctx, request(k), resource, "203.0.113.7")
	must(t, err)
	if _, err := w.svc.Approve(ctx, req, switchboard.OAuthTarget{AccountID: w.acct.ID, AgentID: w.agent.ID}, "https://sb.example/a/helper"); err != nil {
		t.Fatalf("consent to K's client: %v", err)
	}
	if _, err := w.registerFrom("198.51.100.0"); switchboard.ErrorCode(err) != switchboard.ERATELIMITED {
		t.Fatalf("A, whose client made room: %v, want ERATELIMITED", err)
	}
	// The world's client (consented to by no one, registered first by an
	// address that holds one) is still there: the addresses holding ten
	// gave theirs up.
	if _, err := w.svc.CheckRequest(ctx, request(w.client), resource, "192.0.2.1"); err != nil {
		t.Fatalf("the first client: %v", err)
	}
}

// TestRegisterUnusedAgeOut: with the table full, an address that holds as
// many clients as any other gets no room while they are young; once
// PruneUnusedAfter passed, the clients no owner consented to are deleted
// to make room, and the one with a consent stays.
func TestRegisterUnusedAgeOut(t *testing.T) {
	w := newWorld(t, mcpauth.Config{MaxClients: 3}, nil) // w.client, from 192.0.2.1
	ctx := context.Background()
	used, err := w.registerFrom("192.0.2.2")
	must(t, err)
	unused, err := w.registerFrom("192.0.2.3")
	must(t, err)
	w.codeFor(used, resource, switchboard.OAuthTarget{AccountID: w.acct.ID, AgentID: w.agent.ID}) // consent
	*w.now = w.now.Add(mcpauth.PruneUnusedAfter - time.Second)
	if _, err := w.registerFrom("192.0.2.2"); switchboard.ErrorCode(err) != switchboard.EQUOTA {
		t.Fatalf("a full table of young clients: %v, want EQUOTA", err)
	}
	*w.now = w.now.Add(2 * time.Second)
	if _, err := w.registerFrom("192.0.2.2"); err != nil {
		t.Fatalf("after unused clients aged out: %v", err)
	}
	var pe *mcpauth.PageError
	for _, c := range []*switchboard.OAuthClient{w.client, unused} {
		if _, err := w.svc.CheckRequest(ctx, request(c), resource, "192.0.2.1"); !errors.As(err, &pe) {
			t.Fatalf("an unused client past its age: %v, want it unknown", err)
		}
	}
	if _, err := w.svc.CheckRequest(ctx, request(used), resource, "192.0.2.1"); err != nil {
		t.Fatalf("the client an owner consented to: %v", err)
	}
}
