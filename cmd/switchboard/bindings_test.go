package main

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// oneBindings are the bindings an upstream offers alone in these tests.
var oneBindings = map[string]a2a.TransportProtocol{"HTTPJSON": a2a.TransportProtocolHTTPJSON, "GRPC": a2a.TransportProtocolGRPC}

// peerClient returns a client of a peer with token at the agent address,
// speaking the binding its card offers (A2A 1.0).
func peerClient(t *testing.T, ctx context.Context, address, token string, binding a2a.TransportProtocol) *a2aclient.Client {
	t.Helper()
	origin, _ := url.Parse(address)
	hc := &http.Client{Transport: &bearerTransport{token: token, origin: origin, base: http.DefaultTransport}}
	card, err := front.ResolveCard(ctx, hc, address, "")
	if err != nil {
		t.Fatal(err)
	}
	front.PinInterfaces(card, address, false, nil)
	iface, _, err := front.PickInterface(card, binding)
	if err != nil {
		t.Fatal(err)
	}
	c, err := front.NewEndpointClient(ctx, hc, iface)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// peerOver sends text as a peer with token to the agent address, in the
// binding its card offers (A2A 1.0), and returns the task once its turn
// ended.
func peerOver(t *testing.T, address, token string, binding a2a.TransportProtocol, text string) *a2a.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := peerClient(t, ctx, address, token, binding)
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
	if err != nil {
		t.Fatalf("send over %s: %v", binding, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("send over %s: %T, want a task", binding, res)
	}
	testwait.For(t, "the task's turn to end", func() bool {
		if task.Status.State.Terminal() {
			return true
		}
		if task, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
			t.Fatalf("get over %s: %v", binding, err)
		}
		return task.Status.State.Terminal()
	})
	return task
}

// artifactText is the text of a task's artifacts.
func artifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

// TestFrontOneBinding puts a front before an upstream (https) whose card
// offers only HTTP+JSON or only gRPC: the front forwards in that binding,
// with the owner's credentials, whatever binding its peer used (JSON-RPC,
// HTTP+JSON, gRPC); front verify checks the path in it.
func TestFrontOneBinding(t *testing.T) {
	for name, binding := range oneBindings {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", false, upstreamOptions{tls: true, token: "owner-upstream-secret", binding: binding})
			m := frontMain(t, up)
			peerToken := createFront(t, m, "fronted", up.srv.URL+"/invoke")
			if out := cliStdin(t, m, "owner-upstream-secret\n", "front", "credentials", "fronted", "--bearer-stdin"); !strings.Contains(out, "bearer set") {
				t.Fatalf("front credentials said %q", out)
			}
			task := peerSend(t, m, "fronted", peerToken, "m1", "hello", "", true)
			if got, want := task.answer(), "upstream: hello"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("JSON-RPC peer: got %q in %s, want %q completed (%s)", got, task.Status.State, want, task.reason())
			}
			for peerName, peerBinding := range oneBindings {
				got := peerOver(t, m.URL()+"/a/fronted", peerToken, peerBinding, "via "+peerName)
				if want := "upstream: via " + peerName; artifactText(got) != want || got.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("%s peer: got %q in %s, want %q completed", peerName, artifactText(got), got.Status.State, want)
				}
			}
			// Every call upstream went in its binding, with the owner's bearer.
			for _, r := range up.received() {
				if strings.Contains(r, "/.well-known/") {
					continue
				}
				grpcCall := strings.Contains(r, ".A2AService/")
				if grpcCall != (binding == a2a.TransportProtocolGRPC) || !strings.HasSuffix(r, " Bearer owner-upstream-secret") {
					t.Fatalf("a call upstream: %q", r)
				}
			}
			if out := cli(t, m, "front", "verify", "fronted"); !strings.Contains(out, "reachable ("+front.BindingName(binding)+":") || !strings.Contains(out, "GetTask") {
				t.Fatalf("front verify said %q", out)
			}
			if out := cli(t, m, "front", "status", "fronted"); !strings.Contains(out, "versions") || !strings.Contains(out, "1.0") || !regexp.MustCompile(`(?m)^binding +`+regexp.QuoteMeta(front.BindingName(binding))+`$`).MatchString(out) {
				t.Fatalf("front status said %q", out)
			}
		})
	}
}

// TestSendOneBinding: switchboard send and poll reach an agent whose card
// offers only HTTP+JSON or only gRPC (h2c on loopback), with its token.
func TestSendOneBinding(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "alice", "--mode", "inbox")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	t.Setenv("BOB_TOKEN", "bob-secret")
	for name, binding := range oneBindings {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", false, upstreamOptions{token: "bob-secret", binding: binding})
			alias := "bob" + strings.ToLower(name)
			cli(t, m, "peers", "add", alias, up.srv.URL, "--token-env", "BOB_TOKEN", "--allow-private")
			rec := sendJSON(t, m, alias, "--agent", "alice", "--text", "hello", "--wait", "--timeout", "10s")
			if rec.TaskID == "" || rec.Protocol != "1.0" || !strings.HasPrefix(rec.Endpoint, up.srv.URL) {
				t.Fatalf("send: %+v", rec)
			}
			testwait.For(t, "the remote task to finish", func() bool {
				return strings.Contains(cli(t, m, "poll", rec.ID), " completed\n")
			})
			if out := cli(t, m, "poll", rec.ID); !strings.Contains(out, "A2A 1.0 over "+front.BindingName(binding)) {
				t.Fatalf("poll: %s", out)
			}
			for _, r := range up.received() {
				if strings.Contains(r, "/.well-known/") {
					continue
				}
				grpcCall := strings.Contains(r, ".A2AService/")
				if grpcCall != (binding == a2a.TransportProtocolGRPC) || !strings.HasSuffix(r, " Bearer bob-secret") {
					t.Fatalf("a call to the agent: %q", r)
				}
			}
		})
	}
}

// TestConnectForwardOneBinding: connect --forward relays to an agent whose
// card offers only HTTP+JSON or only gRPC (h2c), with --forward-token.
func TestConnectForwardOneBinding(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	for name, binding := range oneBindings {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, "1.0", true, upstreamOptions{token: "fwd-secret", binding: binding})
			handle := "one" + strings.ToLower(name)
			id, agentToken, peerToken := connectAgent(t, m, handle)
			startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL+"/invoke", "--forward-token", "fwd-secret")
			task := peerSend(t, m, handle, peerToken, "m1", "hello", "", true)
			if got, want := task.answer(), "upstream: hello"; got != want || task.Status.State != "TASK_STATE_COMPLETED" {
				t.Fatalf("answer: got %q in %s, want %q completed (%s)", got, task.Status.State, want, task.reason())
			}
			task = peerSend(t, m, handle, peerToken, "m2", "ask", "", true)
			task = peerSend(t, m, handle, peerToken, "m3", "blue", task.ID, true)
			if got, want := task.answer(), "upstream: you chose blue"; got != want {
				t.Fatalf("follow-up answer: got %q, want %q (%s %s)", got, want, task.Status.State, task.reason())
			}
			for _, r := range up.received() {
				if !strings.Contains(r, "/.well-known/") && (strings.Contains(r, ".A2AService/") != (binding == a2a.TransportProtocolGRPC) || !strings.HasSuffix(r, " Bearer fwd-secret")) {
					t.Fatalf("a call upstream: %q", r)
				}
			}
		})
	}
}

// TestSendNamesTheVersion: send and poll name the version spoken as 1.0 or
// 0.3, whatever patch level the card names (an @a2a-js/sdk 0.3 card says
// "0.3.0").
func TestSendNamesTheVersion(t *testing.T) {
	m := MustRunMain(t, t.TempDir(), "")
	cli(t, m, "agent", "create", "alice", "--mode", "inbox")
	t.Setenv("SWITCHBOARD_CONFIG_DIR", t.TempDir())
	t.Setenv("BOB_TOKEN", "bob-secret")
	up := newUpstreamAgent(t, "0.3-pure", false, upstreamOptions{token: "bob-secret"})
	cli(t, m, "peers", "add", "bob", up.srv.URL, "--token-env", "BOB_TOKEN", "--allow-private")
	out := cli(t, m, "send", "bob", "--agent", "alice", "--text", "hello", "--wait", "--timeout", "10s")
	if !strings.Contains(out, "(A2A 0.3): task ") {
		t.Fatalf("send: %s", out)
	}
	id := regexp.MustCompile(`switchboard poll (\S+)\)`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("send named no record: %s", out)
	}
	if out := cli(t, m, "poll", id[1]); !strings.Contains(out, "(A2A 0.3): task ") {
		t.Fatalf("poll: %s", out)
	}
}
