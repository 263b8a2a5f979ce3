package a2aedge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	legacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/push"
)

// peerReceiver is a peer's push endpoint: a real HTTP server on loopback
// that records the state each push carried and its token.
type peerReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	states []string
	tokens []string
}

func newPeerReceiver(t *testing.T) *peerReceiver {
	r := &peerReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		state := "?"
		if req.Header.Get("Content-Type") == push.ContentTypeV1 {
			var sr a2a.StreamResponse
			if json.Unmarshal(b, &sr) == nil {
				if task, ok := sr.Event.(*a2a.Task); ok {
					state = "1.0:" + switchboard.ShortState(task.Status.State)
				}
			}
		} else {
			var task legacy.Task
			if json.Unmarshal(b, &task) == nil {
				state = "0.3:" + string(task.Status.State)
			}
		}
		r.mu.Lock()
		r.states = append(r.states, state)
		r.tokens = append(r.tokens, req.Header.Get(push.HeaderToken))
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *peerReceiver) got() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...), append([]string(nil), r.tokens...)
}

// runPushSender runs the push sender of the harness's service until the
// test ends, reaching loopback receivers.
func runPushSender(h *facetest.Harness, t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Pushes.Run(ctx, push.SendConfig{Poll: 20 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestPushesToPeers sends messages with an inline push configuration over
// 1.0 and 0.3; the owner's replies reach each peer's receiver in the
// shape of its version, and the owner sees the attempts with the secrets
// masked.
func TestPushesToPeers(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	runPushSender(h, t)
	g := h.Agent("alice")
	bob := h.PeerToken(g, "bob")
	rc := newPeerReceiver(t)
	const token = "peer-push-token-0123456789"

	params := facetest.UserMessage("m1", "push me")
	params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{
		"url": rc.URL + "/v1?key=abc", "token": token, "authentication": map[string]any{"scheme": "Bearer", "credentials": "very-secret"},
	}}
	v1 := facetest.Path(h.Call(h.Addr(g), bob, "SendMessage", params).Result(t), "task", "id").(string)
	old := facetest.LegacyMessage("m2", "push me too")
	old["configuration"] = map[string]any{"blocking": false, "pushNotificationConfig": map[string]any{"url": rc.URL + "/v03", "token": token}}
	v03 := h.Call(h.Addr(g), bob, "message/send", old).Result(t)["id"].(string)

	for _, id := range []string{v1, v03} {
		h.Reply(id, a2a.TaskStateWorking, "on it")
		h.Reply(id, a2a.TaskStateCompleted, "done")
	}
	testwait.For(t, "four pushes", func() bool { s, _ := rc.got(); return len(s) == 4 })
	states, tokens := rc.got()
	var gotV1, gotV03 []string
	for _, s := range states {
		if strings.HasPrefix(s, "1.0:") {
			gotV1 = append(gotV1, s)
		} else {
			gotV03 = append(gotV03, s)
		}
	}
	if strings.Join(gotV1, ",") != "1.0:working,1.0:completed" || strings.Join(gotV03, ",") != "0.3:working,0.3:completed" {
		t.Fatalf("pushes %v", states)
	}
	for _, tok := range tokens {
		if tok != token {
			t.Fatalf("token %q", tok)
		}
	}

	testwait.For(t, "both pushes recorded as sent", func() bool {
		r := h.Owner("GET", "/tasks/"+v1+"/pushes", h.OperatorToken, nil)
		ps, _ := r.JSON["pushes"].([]any)
		return len(ps) == 2 && facetest.Path(ps[1], "state") == "sent"
	})
	r := h.Owner("GET", "/tasks/"+v1+"/pushes", h.OperatorToken, nil)
	if r.Status != 200 {
		t.Fatalf("pushes: %d %s", r.Status, r.Body)
	}
	for _, secret := range []string{token, "very-secret", "key=abc"} {
		if strings.Contains(string(r.Body), secret) {
			t.Fatalf("the owner API shows a secret in full: %s", r.Body)
		}
	}
	cfg := r.JSON["configs"].([]any)[0]
	if facetest.Path(cfg, "token") != "peer…" || facetest.Path(cfg, "credentials") != "…" || facetest.Path(cfg, "auth_scheme") != "Bearer" ||
		facetest.Path(cfg, "protocol") != "1.0" || !strings.HasSuffix(facetest.Path(cfg, "url").(string), "/v1?…") {
		t.Fatalf("config %v", cfg)
	}
	p := r.JSON["pushes"].([]any)[0]
	log := facetest.Path(p, "attempt_log").([]any)
	if facetest.Path(p, "task_state") != "working" || facetest.Path(p, "attempts") != 1.0 || len(log) != 1 || facetest.Path(log[0], "status_code") != 200.0 {
		t.Fatalf("push %v", p)
	}

	// Another owner's task is not found.
	_, other := h.Account("mallory")
	if r := h.Owner("GET", "/tasks/"+v1+"/pushes", other, nil); r.Status != http.StatusNotFound {
		t.Fatalf("another owner: %d", r.Status)
	}
}

// TestCardDeclaresPush checks that cards say push notifications are sent
// when the server has a sender.
func TestCardDeclaresPush(t *testing.T) {
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }))
	g := h.Agent("alice")
	for _, p := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json"} {
		r := h.Do("GET", h.Addr(g)+p, nil, "")
		if facetest.Path(r.JSON, "capabilities", "pushNotifications") != true {
			t.Fatalf("%s: %s", p, r.Body)
		}
	}
}
