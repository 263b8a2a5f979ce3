package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// TestPushWalkthrough runs a server whose sender may reach loopback: the
// card declares push notifications, a peer's inline push config receives
// the owner's reply from `switchboard reply`, and `switchboard show TASK
// --pushes` shows the attempt with the token masked.
func TestPushWalkthrough(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Header.Get("User-Agent")+" "+string(b))
		mu.Unlock()
	}))
	defer rc.Close()
	m := MustRunMain(t, t.TempDir(), "", func(c *server.Config) {
		c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		c.Metrics = true
	})
	cli(t, m, "agent", "create", "helper", "--mode", "inbox")
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(cli(t, m, "--json", "token", "issue", "--agent", "helper", "bob")), &tok); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(m.URL() + "/a/helper/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Capabilities struct {
			PushNotifications bool `json:"pushNotifications"`
		} `json:"capabilities"`
	}
	json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if !card.Capabilities.PushNotifications {
		t.Fatal("the card does not declare push notifications")
	}

	const pushToken = "bob-push-token-abcdefghijkl"
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},
		"configuration":{"taskPushNotificationConfig":{"url":"` + rc.URL + `/hook","token":"` + pushToken + `"}}}}`
	req, _ := http.NewRequest("POST", m.URL()+"/a/helper", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	json.NewDecoder(resp.Body).Decode(&sent)
	resp.Body.Close()
	id := sent.Result.Task.ID
	if id == "" {
		t.Fatal("send failed")
	}
	cli(t, m, "reply", id, "--text", "hello back")

	var out string
	testwait.For(t, "the completed push to be sent", func() bool {
		out = cli(t, m, "show", id, "--pushes")
		return strings.Contains(out, "completed  sent")
	})
	if !strings.Contains(out, "completed  sent  attempts 1") || !strings.Contains(out, "delivered (200)") ||
		!strings.Contains(out, "token bob-…") || strings.Contains(out, pushToken) {
		t.Fatalf("show --pushes:\n%s", out)
	}
	mu.Lock()
	got := strings.Join(bodies, "\n")
	mu.Unlock()
	if !strings.HasPrefix(got, "switchboard/") || !strings.Contains(got, `"TASK_STATE_COMPLETED"`) || !strings.Contains(got, "hello back") {
		t.Fatalf("pushed: %s", got)
	}
	resp, err = http.Get(m.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `switchboard_push_attempts_total{outcome="sent"} 1`) {
		t.Fatalf("metrics:\n%s", metrics)
	}
}
