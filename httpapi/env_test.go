package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestEnvCallerChecks: what every face asks the Env about its caller. An
// owner token of a disabled account is refused (403), and so is the agent
// token of an agent of a disabled account; another owner's agent reads as
// not found (404), the operator reads every agent.
func TestEnvCallerChecks(t *testing.T) {
	h := facetest.New(t)
	ctx := context.Background()
	_, alice := h.Account("alice")
	bob, bobToken := h.Account("bob")
	_, agentToken := h.NetAgent(bobToken, "bobs", "connector", "")

	if r := h.Owner("GET", "/agents/bobs", alice, nil); r.Status != http.StatusNotFound {
		t.Fatalf("alice reads bob's agent: %d %s, want 404", r.Status, r.Body)
	}
	for _, tok := range []string{bobToken, h.OperatorToken} {
		if r := h.Owner("GET", "/agents/bobs", tok, nil); r.Status != http.StatusOK {
			t.Fatalf("its owner or the operator reads bob's agent: %d %s", r.Status, r.Body)
		}
	}
	if r := h.Owner("GET", "/directory", agentToken, nil); r.Status != http.StatusOK {
		t.Fatalf("the agent reads the directory: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/tasks/no-such-task", agentToken, nil); r.Status != http.StatusNotFound {
		t.Fatalf("the agent reads a task that is not there: %d %s, want 404", r.Status, r.Body)
	}

	yes := true
	_, err := h.DB.UpdateAccount(ctx, bob.ID, switchboard.AccountUpdate{Disabled: &yes})
	facetest.Must(t, err)
	if r := h.Owner("GET", "/agents", bobToken, nil); r.Status != http.StatusForbidden {
		t.Fatalf("the owner token of a disabled account: %d %s, want 403", r.Status, r.Body)
	}
	for _, path := range []string{"/directory", "/tasks/no-such-task"} {
		if r := h.Owner("GET", path, agentToken, nil); r.Status != http.StatusForbidden {
			t.Fatalf("GET %s with the agent token of a disabled account's agent: %d %s, want 403", path, r.Status, r.Body)
		}
	}
}
