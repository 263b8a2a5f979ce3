package ownerhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/outpeer"
	"github.com/switchboard-dev/switchboard/push"
	"github.com/switchboard-dev/switchboard/wake"
)

// updateOwnerAPIGolden rewrites the golden shapes of TestOwnerAPIGolden.
var updateOwnerAPIGolden = flag.Bool("update-ownerapi-golden", false, "rewrite ownerhttp/testdata/ownerapi/*.golden")

// goldenPresence says that no connector agent is connected, so that agent
// answers carry the "connected" field.
type goldenPresence struct{}

func (goldenPresence) AgentConnectedSince(context.Context, string) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// TestOwnerAPIGolden calls every endpoint of the owner and operator API in
// one scenario and compares the shape of each answer (its status, and every
// key with the JSON type of its value, in order) with a golden file under
// testdata/ownerapi. Values are not compared: ids, times and secrets
// change from run to run. The shapes are the contract that the CLI and
// other clients decode; run with -update-ownerapi-golden to accept a
// deliberate change.
func TestOwnerAPIGolden(t *testing.T) {
	var wakes *wake.Service
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PushNotifications = true }), facetest.WithWakes(t, true),
		facetest.WithDeps(func(d *assembly.APIDeps) {
			wakes = d.Wakes
			d.Presence = goldenPresence{}
			d.MCP = mcpserver.New(mcpserver.Deps{Accounts: d.Accounts, Agents: d.Agents, Tokens: d.Tokens, Tasks: d.Tasks, Outbox: d.Outbox,
				Network: d.Network, Limiter: d.Limiter, Logger: d.Logger}, mcpserver.Config{})
			d.OutboundPeers = outpeer.New(d.Agents.(switchboard.Store), front.ClientOptions{})
		}))
	ctx := context.Background()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "woken")
	}))
	defer recv.Close()
	g := goldenRecorder{t: t, h: h}
	op := h.OperatorToken

	// Accounts.
	g.call("account_whoami", "GET", "/account", op, nil)
	acct := g.call("account_create", "POST", "/accounts", op, map[string]any{"name": "acme"})
	acctID := acct["id"].(string)
	g.call("account_list", "GET", "/accounts", op, nil)
	g.call("account_get", "GET", "/accounts/"+acctID, op, nil)
	g.call("account_update", "PATCH", "/accounts/"+acctID, op, map[string]any{"name": "acme2", "disabled": false})
	acctToken := g.call("account_rotate", "POST", "/accounts/"+acctID+"/rotate", op, nil)["token"].(string)
	g.call("account_rotate_own", "POST", "/account/rotate", acctToken, nil)

	// Agents.
	skills := []map[string]any{{"id": "echo", "name": "Echo", "description": "Says it back", "tags": []string{"test"}}}
	g.call("agent_create_connector", "POST", "/agents", op, map[string]any{"handle": "conn"})
	g.call("agent_create_webhook", "POST", "/agents", op, map[string]any{"handle": "hook", "mode": "webhook", "endpoint": "https://hook.example/x"})
	g.call("agent_create_inbox", "POST", "/agents", op, map[string]any{"handle": "box", "mode": "inbox", "description": "a box",
		"skills": skills, "extended_skills": skills})
	g.call("agent_create_morph", "POST", "/agents", op, map[string]any{"handle": "morph", "mode": "inbox"})
	g.call("agent_list", "GET", "/agents", op, nil)
	g.call("agent_get", "GET", "/agents/box", op, nil)
	g.call("agent_get_connector", "GET", "/agents/conn", op, nil)
	g.call("agent_update", "PATCH", "/agents/box", op, map[string]any{"name": "Box", "accepts_tasks": true})
	g.call("agent_update_to_webhook", "PATCH", "/agents/morph", op, map[string]any{"mode": "webhook", "endpoint": "https://hook.example/m"})
	g.call("agent_rotate_token", "POST", "/agents/conn/agent-token", op, nil)
	g.call("agent_rotate_secret", "POST", "/agents/hook/webhook-secret", op, nil)
	g.call("agent_delete", "DELETE", "/agents/morph", op, nil)

	// Peer tokens.
	bob := g.call("token_issue", "POST", "/agents/box/tokens", op, map[string]any{"label": "bob"})["token"].(string)
	g.call("token_issue_old", "POST", "/agents/box/tokens", op, map[string]any{"label": "old"})
	g.call("token_revoke", "DELETE", "/agents/box/tokens/old", op, nil)
	g.call("token_list", "GET", "/agents/box/tokens?all=1", op, nil)
	mcpTok := g.call("mcp_token_create", "POST", "/agents/box/mcp-tokens", op, map[string]any{"label": "claude"})
	g.call("mcp_token_list_agent", "GET", "/agents/box/mcp-tokens", op, nil)
	g.call("mcp_token_create_account", "POST", "/mcp-tokens", op, map[string]any{"label": "desk", "agents": []string{"box"}})
	g.call("mcp_token_list", "GET", "/mcp-tokens", op, nil)
	g.call("mcp_token_revoke", "DELETE", "/mcp-tokens/"+mcpTok["id"].(string), op, nil)
	g.call("agent_update_mcp_off", "PATCH", "/agents/box", op, map[string]any{"mcp": false})

	// Wakes: a peer's message wakes the inbox agent at once.
	g.call("wake_set", "PUT", "/agents/box/wake", op, map[string]any{"url": recv.URL + "/hook?token=abc", "key": "k-0123456789",
		"preset": "generic", "debounce_seconds": 0, "body_template": `{"t":"{{preview}}","ids":{{taskIdsJson}}}`})
	msg := facetest.UserMessage("m-1", "hello")
	msg["message"].(map[string]any)["contextId"] = "ctx-g"
	taskID := facetest.Path(h.Call(h.Addr(h.AgentByHandle("box")), bob, "SendMessage", msg).Result(t), "task", "id").(string)
	if _, err := wakes.SendDue(ctx, wake.SenderConfig{}); err != nil {
		t.Fatal(err)
	}
	g.call("wake_get", "GET", "/agents/box/wake", op, nil)
	g.call("wake_test", "POST", "/agents/box/wake/test", op, nil)

	// Inbox and tasks.
	g.call("inbox", "GET", "/agents/box/inbox", op, nil)
	g.call("task_get", "GET", "/tasks/"+taskID, op, nil)
	g.call("task_reply", "POST", "/tasks/"+taskID+"/reply", op, map[string]any{"text": "hi bob", "state": "input-required"})

	// Pushes to a peer, sent by the push sender.
	pushCtx, stopPushes := context.WithCancel(ctx)
	pushDone := make(chan struct{})
	go func() {
		defer close(pushDone)
		_ = h.Pushes.Run(pushCtx, push.SendConfig{Poll: 20 * time.Millisecond})
	}()
	defer func() { stopPushes(); <-pushDone }()
	pmsg := facetest.UserMessage("m-2", "push me")
	pmsg["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{
		"url": recv.URL + "/push?key=abc", "token": "peer-push-token-0123456789",
		"authentication": map[string]any{"scheme": "Bearer", "credentials": "very-secret"},
	}}
	pushTask := facetest.Path(h.Call(h.Addr(h.AgentByHandle("box")), bob, "SendMessage", pmsg).Result(t), "task", "id").(string)
	g.call("task_reply_completed", "POST", "/tasks/"+pushTask+"/reply", op, map[string]any{"text": "done"})
	testwait.For(t, "the push to be sent", func() bool {
		r := h.Owner("GET", "/tasks/"+pushTask+"/pushes", op, nil)
		ps, _ := r.JSON["pushes"].([]any)
		return len(ps) == 1 && facetest.Path(ps[0], "state") == "sent"
	})
	g.call("task_pushes", "GET", "/tasks/"+pushTask+"/pushes", op, nil)

	// Outbox and history.
	rec := g.call("outbound_create", "POST", "/agents/box/outbox", op, map[string]any{"target": "carol", "endpoint": "https://carol.example/",
		"protocol": "1.0", "context_id": "ctx-g", "task_id": "", "message_id": "m-3", "text": "carol?", "push_token": "push-token-0123456789abcdef"})
	g.call("outbound_create_plain", "POST", "/agents/box/outbox", op, map[string]any{"target": "dan", "endpoint": "https://dan.example/",
		"protocol": "0.3", "text": "dan?"})
	remote := map[string]any{"id": "c-1", "contextId": "ctx-g", "status": map[string]any{"state": "TASK_STATE_COMPLETED",
		"message": map[string]any{"messageId": "z", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "sure"}}}}}
	g.call("outbound_update", "PATCH", "/outbox/"+rec["id"].(string), op, map[string]any{"source": "send", "task": remote})
	g.call("outbound_get", "GET", "/outbox/"+rec["id"].(string), op, nil)
	g.call("outbox_list", "GET", "/agents/box/outbox", op, nil)
	g.call("history", "GET", "/agents/box/history/ctx-g", op, nil)

	// Synced aliases.
	g.call("outbound_peer_put", "PUT", "/agents/box/peers/carol", op, map[string]any{"url": "https://carol.example/a/carol", "token": "sbp_carol"})
	g.call("outbound_peer_list", "GET", "/agents/box/peers", op, nil)
	g.call("outbound_peer_delete", "DELETE", "/agents/box/peers/carol", op, nil)

	// Deliveries of a connector agent that is not connected.
	connPeer := g.call("token_issue_conn", "POST", "/agents/conn/tokens", op, map[string]any{"label": "bob"})["token"].(string)
	cmsg := facetest.UserMessage("m-4", "are you there?")
	cmsg["configuration"] = map[string]any{"returnImmediately": true}
	h.Call(h.Addr(h.AgentByHandle("conn")), connPeer, "SendMessage", cmsg).Result(t)
	g.call("deliveries", "GET", "/agents/conn/deliveries?all=1", op, nil)

	// Errors, and an answer without a body.
	g.call("error_not_found", "GET", "/agents/nobody", op, nil)
	g.call("error_invalid", "POST", "/agents", op, map[string]any{"handle": "x", "nmae": "typo"})
	g.call("wake_delete", "DELETE", "/agents/box/wake", op, nil)
}

// goldenRecorder sends owner-API requests and checks each answer's shape
// against its golden file.
type goldenRecorder struct {
	t testing.TB
	h *facetest.Harness
}

// call sends the request, checks the shape of the answer against
// testdata/ownerapi/name.golden and returns the answer decoded (nil unless
// it is an object).
func (g goldenRecorder) call(name, method, p, token string, body any) map[string]any {
	g.t.Helper()
	r := g.h.Owner(method, p, token, body)
	if r.Status >= 500 {
		g.t.Fatalf("%s %s: HTTP %d %s", method, p, r.Status, r.Body)
	}
	shape, err := jsonShape(r.Body)
	if err != nil {
		g.t.Fatalf("%s %s: %v: %s", method, p, err, r.Body)
	}
	got := fmt.Sprintf("%s -> %d\n%s", method, r.Status, shape)
	file := filepath.Join("testdata", "ownerapi", name+".golden")
	if *updateOwnerAPIGolden {
		facetest.Must(g.t, os.MkdirAll(filepath.Dir(file), 0o755))
		facetest.Must(g.t, os.WriteFile(file, []byte(got), 0o644))
		return r.JSON
	}
	want, err := os.ReadFile(file)
	if err != nil {
		g.t.Fatalf("%s: %v (run go test -run TestOwnerAPIGolden -update-ownerapi-golden to write it)", name, err)
	}
	if got != string(want) {
		g.t.Errorf("%s %s (%s): the shape of the answer changed:\n%s\nanswer: %s", method, p, file, lineDiff(string(want), got), r.Body)
	}
	return r.JSON
}

// jsonShape describes a JSON document by its structure: one line per value
// with its path and JSON type ("$.skills[0].tags[0] string"), in the order
// of the document. An empty body is "(empty)".
func jsonShape(data []byte) (string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return "(empty)\n", nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b strings.Builder
	if err := shapeValue(dec, "$", &b); err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("trailing data after the JSON value")
	}
	return b.String(), nil
}

func shapeValue(dec *json.Decoder, at string, b *strings.Builder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			fmt.Fprintf(b, "%s object\n", at)
			for dec.More() {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				if err := shapeValue(dec, at+"."+key.(string), b); err != nil {
					return err
				}
			}
		} else {
			fmt.Fprintf(b, "%s array\n", at)
			for i := 0; dec.More(); i++ {
				if err := shapeValue(dec, fmt.Sprintf("%s[%d]", at, i), b); err != nil {
					return err
				}
			}
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		fmt.Fprintf(b, "%s string\n", at)
	case json.Number:
		fmt.Fprintf(b, "%s number\n", at)
	case bool:
		fmt.Fprintf(b, "%s bool\n", at)
	case nil:
		fmt.Fprintf(b, "%s null\n", at)
	}
	return nil
}

// lineDiff lists the lines only in want ("-") and only in got ("+").
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	var plus []string
	for _, l := range strings.Split(got, "\n") {
		if count[l] > 0 {
			count[l]--
			continue
		}
		plus = append(plus, "+ "+l)
	}
	var minus []string
	for _, l := range strings.Split(want, "\n") {
		if count[l] > 0 {
			count[l]--
			minus = append(minus, "- "+l)
		}
	}
	if len(minus)+len(plus) == 0 {
		return "(the same lines in another order)"
	}
	return strings.Join(append(minus, plus...), "\n")
}
