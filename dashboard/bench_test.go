package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// BenchmarkAgentsPage renders the agents list of an owner with 1,000
// agents (half of them live, each with a waiting task), as the server
// does for GET /dashboard: the budget is 50 ms (docs/performance.md).
func BenchmarkAgentsPage(b *testing.B) {
	h := newHarness(b)
	acct, token := h.account("alice", switchboard.RoleOwner)
	ctx := context.Background()
	now := time.Now()
	for i := range 1000 {
		g := h.agent(acct, fmt.Sprintf("agent-%04d", i), fmt.Sprintf("Agent %d", i), "Does things <carefully>")
		if i%2 == 0 {
			if _, err := h.db.OpenSession(ctx, &switchboard.AgentSession{AgentID: g.ID, Holder: fmt.Sprint("c", i),
				InstanceID: "i1", ConnectedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	c := h.client()
	c.signIn(token)
	u, _ := url.Parse(h.srv.URL)
	cookies := c.hc.Jar.Cookies(u)
	req := httptest.NewRequest("GET", "/dashboard", nil)
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.console.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "agent-0999") {
			b.Fatalf("GET /dashboard: %d", rec.Code)
		}
	}
}
