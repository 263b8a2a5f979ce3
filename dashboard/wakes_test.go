package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// TestWakePage: the owner sets a wake webhook on the agent's wake page
// (the key never shown again), sends a test wake and sees the receiver's
// answer (escaped), sees the latest wakes, and removes it; another owner
// gets 404; POSTs without the CSRF token are refused; a bad debounce is
// refused with the service's limits.
func TestWakePage(t *testing.T) {
	h := newHarness(t)
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	var mu sync.Mutex
	var auth []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`<b>woken</b>`))
	}))
	t.Cleanup(recv.Close)

	c := h.client()
	c.signIn(token)
	if _, page := c.get("/dashboard/agents/helper"); !strings.Contains(page, `href="/dashboard/agents/helper/wake"`) {
		t.Fatalf("no link to the wake page:\n%s", page)
	}
	res, page := c.get("/dashboard/agents/helper/wake")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "has no wake webhook") {
		t.Fatalf("wake page: %s\n%s", res.Status, page)
	}
	form := url.Values{"csrf": {csrf(t, page)}, "url": {recv.URL + "/wake"}, "preset": {"generic"}, "key": {"s3cret-key"}}
	if res, _ := c.post("/dashboard/agents/helper/wake", url.Values{"url": form["url"], "key": form["key"]}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("set without the CSRF token: %s", res.Status)
	}
	other := h.client()
	otherPage := other.signIn(bobToken)
	if res, _ := other.get("/dashboard/agents/helper/wake"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's wake page: %s", res.Status)
	}
	if res, _ := other.post("/dashboard/agents/helper/wake", url.Values{"csrf": {csrf(t, otherPage)}, "url": form["url"]}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner sets: %s", res.Status)
	}

	res, page = c.post("/dashboard/agents/helper/wake", form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("set: %s\n%s", res.Status, page)
	}
	ctx := context.Background()
	cfg, err := h.wakes.Config(ctx, g)
	if err != nil || cfg.URL != recv.URL+"/wake" || cfg.Key != "s3cret-key" || cfg.Debounce != 10e9 {
		t.Fatalf("stored: %+v %v", cfg, err)
	}
	_, page = c.get("/dashboard/agents/helper/wake")
	if strings.Contains(page, "s3cret-key") || !strings.Contains(page, "<dt>Key</dt><dd>set</dd>") {
		t.Fatalf("the key is shown, or not said to be set:\n%s", page)
	}
	// Saving the form as shown keeps everything.
	keep := url.Values{"csrf": form["csrf"], "preset": {"generic"}, "debounce_seconds": {"10"}, "max_per_hour": {"0"},
		"key_header": {cfg.KeyHeader}, "key_prefix": {cfg.KeyPrefix}, "openclaw_agent_id": {cfg.OpenClawAgentID}, "cli_command": {cfg.CLICommand}}
	if res, _ := c.post("/dashboard/agents/helper/wake", keep); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save unchanged: %s", res.Status)
	}
	if again, _ := h.wakes.Config(ctx, g); again.Key != "s3cret-key" || again.URL != cfg.URL {
		t.Fatalf("an unchanged form changed the webhook: %+v", again)
	}
	keep.Set("debounce_seconds", "7200")
	res, page = c.post("/dashboard/agents/helper/wake", keep)
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "between 0 and 3600") {
		t.Fatalf("a debounce past the limit: %s\n%s", res.Status, page)
	}

	res, page = c.post("/dashboard/agents/helper/wake/test", url.Values{"csrf": form["csrf"]})
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-test-status="202"`) || !strings.Contains(page, "&lt;b&gt;woken&lt;/b&gt;") {
		t.Fatalf("test wake: %s\n%s", res.Status, page)
	}
	mu.Lock()
	if len(auth) != 1 || auth[0] != "Bearer s3cret-key" {
		t.Fatalf("the receiver got %q", auth)
	}
	mu.Unlock()

	if _, err := h.wakes.Enqueue(ctx, switchboard.WakeRequest{AgentID: g.ID, ContextID: "ctx-1", Kind: switchboard.WakeOutboundUpdate, From: "remote"}); err != nil {
		t.Fatal(err)
	}
	if _, page = c.get("/dashboard/agents/helper/wake"); !strings.Contains(page, `data-wake-state="pending"`) {
		t.Fatalf("the queued wake is not listed:\n%s", page)
	}

	if res, _ := c.post("/dashboard/agents/helper/wake/clear", url.Values{"csrf": {"nope"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("clear without the CSRF token: %s", res.Status)
	}
	if res, _ := c.post("/dashboard/agents/helper/wake/clear", url.Values{"csrf": form["csrf"]}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("clear: %s", res.Status)
	}
	if _, err := h.wakes.Config(ctx, g); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("after clearing: %v", err)
	}
	res, page = c.post("/dashboard/agents/helper/wake/test", url.Values{"csrf": form["csrf"]})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "has no wake configuration") {
		t.Fatalf("a test without a webhook: %s\n%s", res.Status, page)
	}
}
