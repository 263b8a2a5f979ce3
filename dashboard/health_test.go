package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestHealthPage: the operator's health page shows the instances holding
// connected agents, the agents connected, and the depth of each queue, as
// the store holds them.
func TestHealthPage(t *testing.T) {
	h := newHarness(t)
	_, opToken := h.account("operator", switchboard.RoleOperator)
	alice, _ := h.account("alice", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	h.agent(alice, "idle", "Idle", "")
	ctx := context.Background()
	now := h.clock()
	if _, err := h.db.OpenSession(ctx, &switchboard.AgentSession{AgentID: g.ID, Holder: "conn-1", InstanceID: "instance-b",
		ConnectedAt: now, ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	peer := switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: "carol"}
	for range 2 {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
		if _, _, err := h.relay.SendMessage(ctx, g, peer, &a2a.SendMessageRequest{Message: msg}, switchboard.ProtocolV1); err != nil {
			t.Fatal(err)
		}
	}
	c := h.client()
	c.signIn(opToken)
	res, page := c.get("/dashboard/health")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("health: %s\n%s", res.Status, page)
	}
	for _, want := range []string{`<tr data-instance="instance-b">`, `data-count="agents">2<`, `data-count="connected">1<`,
		`data-count="tasks-submitted">2<`, `data-count="deliveries-queued">2<`, `data-count="wakes-pending">0<`, `data-count="pushes-queued">0<`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the health page lacks %q:\n%s", want, page)
		}
	}
	h.advance(2 * time.Minute) // the session lapses
	if _, page = c.get("/dashboard/health"); strings.Contains(page, "instance-b") || !strings.Contains(page, `data-count="connected">0<`) {
		t.Fatalf("a lapsed session still counts:\n%s", page)
	}
}
