package ownerhttp_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/facetest"
)

func TestApprovalAPI(t *testing.T) {
	h := facetest.New(t)
	h.Network.RequireApproval = true
	_, owner := h.Account("alice")
	r := h.Owner("POST", "/agents", owner, map[string]any{"handle": "newcomer"})
	if r.Status != http.StatusCreated || r.JSON["approved"] != false {
		t.Fatalf("an owner's new agent: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("POST", "/agents", h.OperatorToken, map[string]any{"handle": "staff"}); r.JSON["approved"] != true {
		t.Fatalf("the operator's new agent: %s", r.Body)
	}
	if r := h.Owner("POST", "/agents/newcomer/approve", owner, nil); r.Status != http.StatusForbidden || !strings.Contains(r.Text(), "only the operator may approve agents") {
		t.Fatalf("an owner approves: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("POST", "/agents/newcomer/approve", h.OperatorToken, nil); r.Status != http.StatusOK || r.JSON["approved"] != true {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("GET", "/agents/newcomer", owner, nil); r.JSON["approved"] != true {
		t.Fatalf("after approval: %s", r.Body)
	}
	if r := h.Owner("POST", "/agents/newcomer/unapprove", h.OperatorToken, nil); r.Status != http.StatusOK || r.JSON["approved"] != false {
		t.Fatalf("unapprove: %d %s", r.Status, r.Body)
	}
}

func TestCommunitiesAPI(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, bob := h.Account("bob")
	h.NetAgent(alice, "a1", "inbox", "")
	h.NetAgent(bob, "b1", "inbox", "")
	join := func(token, agent, c string) *facetest.Response {
		return h.Owner("PUT", "/agents/"+agent+"/communities/"+c, token, nil)
	}
	if r := join(alice, "a1", "Lab"); r.Status != http.StatusCreated || !slices.Equal(facetest.Strings(r.JSON["communities"]), []string{"lab"}) {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	if r := join(alice, "a1", "lab"); r.Status != http.StatusOK {
		t.Fatalf("join again: %d %s", r.Status, r.Body)
	}
	if r := join(alice, "a1", "not a slug"); r.Status != http.StatusBadRequest {
		t.Fatalf("a bad name: %d %s", r.Status, r.Body)
	}
	if r := join(bob, "a1", "lab"); r.Status != http.StatusNotFound {
		t.Fatalf("another owner's agent: %d %s", r.Status, r.Body)
	}
	if r := join(bob, "b1", "lab"); r.Status != http.StatusCreated {
		t.Fatalf("bob joins: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("PUT", "/communities/staff", alice, map[string]any{"closed": true}); r.Status != http.StatusForbidden {
		t.Fatalf("an owner closes: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("PUT", "/communities/staff", h.OperatorToken, map[string]any{"closed": true}); r.Status != http.StatusCreated || r.JSON["closed"] != true ||
		!strings.HasSuffix(r.JSON["address"].(string), "/c/staff") {
		t.Fatalf("the operator closes: %d %s", r.Status, r.Body)
	}
	if r := join(alice, "a1", "staff"); r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "closed") {
		t.Fatalf("an owner joins a closed community: %d %s", r.Status, r.Body)
	}
	if r := join(h.OperatorToken, "a1", "staff"); r.Status != http.StatusCreated {
		t.Fatalf("the operator adds to a closed community: %d %s", r.Status, r.Body)
	}
	r := h.Owner("GET", "/communities", alice, nil)
	var list []map[string]any
	facetest.MustJSON(t, r.Body, &list)
	if len(list) != 2 || list[0]["name"] != "lab" || list[0]["members"] != 2.0 || list[1]["name"] != "staff" || list[1]["closed"] != true {
		t.Fatalf("alice's communities: %s", r.Body)
	}
	facetest.MustJSON(t, h.Owner("GET", "/communities", bob, nil).Body, &list)
	if len(list) != 1 || list[0]["name"] != "lab" {
		t.Fatalf("bob's communities: %v", list)
	}
	if r := h.Owner("DELETE", "/agents/a1/communities/staff", alice, nil); r.Status != http.StatusOK || !slices.Equal(facetest.Strings(r.JSON["communities"]), []string{"lab"}) {
		t.Fatalf("leave a closed community: %d %s", r.Status, r.Body)
	}
	if r := h.Owner("DELETE", "/agents/a1/communities/staff", alice, nil); r.Status != http.StatusNotFound {
		t.Fatalf("leave again: %d %s", r.Status, r.Body)
	}
}
