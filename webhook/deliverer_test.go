package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
	"github.com/switchboard-dev/switchboard/webhook"
)

// fixture runs a task service with a webhook dispatcher over a real store.
type fixture struct {
	svc   *relay.Service
	db    *sqlstore.DB
	agent *switchboard.Agent
	peer  switchboard.Peer
}

func newFixture(t *testing.T, endpoint string, guard netguard.Options, deadline ...time.Duration) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	bus := membus.New()
	svc := relay.New(db, bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(deadline) > 0 {
		svc.DeliveryDeadline = deadline[0]
	}
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "a", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "hook", Mode: switchboard.ModeWebhook,
		AcceptsTasks: true, Endpoint: endpoint, WebhookSecret: switchboard.NewWebhookSecret()}
	must(t, db.CreateAgent(ctx, g))

	loops, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	d := &webhook.Deliverer{Client: netguard.NewClient(guard), UserAgent: "switchboard-test"}
	go func() {
		defer wg.Done()
		_ = svc.RunDispatcher(loops, switchboard.ModeWebhook, d, relay.DispatchConfig{Timeout: 2 * time.Second, Poll: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	}()
	go func() {
		defer wg.Done()
		_ = svc.RunDeliverySweeper(loops, 20*time.Millisecond)
	}()
	t.Cleanup(func() {
		stop()
		wg.Wait()
		_ = bus.Close()
		_ = db.Close()
	})
	return &fixture{svc: svc, db: db, agent: g, peer: switchboard.Peer{AgentID: g.ID, ID: "peer-1", Label: "bob"}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) send(t *testing.T, text string) *switchboard.Task {
	t.Helper()
	task, _, err := f.svc.SendMessage(context.Background(), f.agent, f.peer, &a2a.SendMessageRequest{
		Message: &a2a.Message{ID: switchboard.NewID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}},
	}, switchboard.ProtocolV1)
	must(t, err)
	return task
}

// wait waits for the task's turn to end and returns it.
func (f *fixture) wait(t *testing.T, task *switchboard.Task) (*switchboard.Task, error) {
	t.Helper()
	return f.svc.WaitForTurn(context.Background(), task.ID(), task.Seq, 5*time.Second)
}

func TestDeliverSignedAndAnswered(t *testing.T) {
	var secret string
	var got webhook.Task
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/hooks/a2a/task" || r.Method != http.MethodPost {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		if !webhook.Verify(secret, r.Header.Get(webhook.HeaderTimestamp), r.Header.Get(webhook.HeaderSignature), body, time.Now(), 5*time.Minute) {
			t.Error("signature does not verify")
		}
		if webhook.Verify("wrong-secret", r.Header.Get(webhook.HeaderTimestamp), r.Header.Get(webhook.HeaderSignature), body, time.Now(), 5*time.Minute) {
			t.Error("signature verifies with the wrong secret")
		}
		_ = json.Unmarshal(body, &got)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "completed", "agent": "hook", "result": "the answer is 4"})
	}))
	defer srv.Close()
	f := newFixture(t, srv.URL+"/hooks/", netguard.Options{AllowPrivate: true})
	secret = f.agent.WebhookSecret

	task, err := f.wait(t, f.send(t, "what is 2+2?"))
	must(t, err)
	if task.State() != a2a.TaskStateCompleted || len(task.A2A.Artifacts) != 1 || task.A2A.Artifacts[0].Parts[0].Text() != "the answer is 4" {
		t.Fatalf("task after the webhook answered: %+v", task.A2A)
	}
	if got.FromAgentID != f.peer.ID || got.From != "bob" || got.TaskDescription != "what is 2+2?" || got.TaskID != string(task.ID()) ||
		got.Message == nil || got.Message.ID == "" || switchboard.MessageText(got.Message) != "what is 2+2?" {
		t.Fatalf("webhook body: %+v", got)
	}
}

// TestLegacyReceiverReadsTheOriginalShape: a receiver written for the
// original network reads payload.message as text and from_agent_id as the
// sender's id; it must work as it is, reading the body into a map.
func TestLegacyReceiverReadsTheOriginalShape(t *testing.T) {
	var reply string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		payload, _ := body["payload"].(map[string]any)
		msg, ok := payload["message"].(string) // the original receiver: "got: " + msg
		from, _ := body["from_agent_id"].(string)
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		reply = "got: " + msg + " from " + from
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "agent": "legacy", "result": reply})
	}))
	defer srv.Close()
	f := newFixture(t, srv.URL, netguard.Options{AllowPrivate: true})
	task, err := f.wait(t, f.send(t, "hello"))
	must(t, err)
	if task.State() != a2a.TaskStateCompleted || reply != "got: hello from "+f.peer.ID {
		t.Fatalf("legacy receiver: %s, %q", task.State(), reply)
	}
}

func TestDeliverStatusesAndData(t *testing.T) {
	answers := map[string]any{
		"failed":         map[string]any{"status": "error", "result": "no can do"},
		"rejected":       map[string]any{"status": "rejected"},
		"input-required": map[string]any{"status": "input-required", "result": "which one?"},
		"data":           map[string]any{"status": "success", "result": map[string]any{"sum": 4}},
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = json.NewEncoder(w).Encode(answer)
			}))
			defer srv.Close()
			f := newFixture(t, srv.URL, netguard.Options{AllowPrivate: true})
			task, err := f.wait(t, f.send(t, "x"))
			must(t, err)
			want := map[string]a2a.TaskState{"failed": a2a.TaskStateFailed, "rejected": a2a.TaskStateRejected,
				"input-required": a2a.TaskStateInputRequired, "data": a2a.TaskStateCompleted}[name]
			if task.State() != want {
				t.Fatalf("state %s, want %s", task.State(), want)
			}
			if name == "data" {
				if d, _ := task.A2A.Artifacts[0].Parts[0].Data().(map[string]any); d["sum"] != float64(4) {
					t.Fatalf("data artifact %+v", task.A2A.Artifacts[0].Parts[0])
				}
			}
			if name == "failed" && switchboard.MessageText(task.A2A.Status.Message) != "no can do" {
				t.Fatalf("failure reason %q", switchboard.MessageText(task.A2A.Status.Message))
			}
		})
	}
}

func TestDeliverRetriesUntilAnswered(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "completed", "result": "third time"})
		}
	}))
	defer srv.Close()
	f := newFixture(t, srv.URL, netguard.Options{AllowPrivate: true})
	task, err := f.wait(t, f.send(t, "x"))
	must(t, err)
	if task.State() != a2a.TaskStateCompleted || calls.Load() != 3 {
		t.Fatalf("state %s after %d calls", task.State(), calls.Load())
	}
}

func TestDeliverGarbageIsInvalidAgentResponse(t *testing.T) {
	for name, body := range map[string]string{
		"NotJSON":       "<html>oops</html>",
		"UnknownStatus": `{"status":"maybe","result":"x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, body)
			}))
			defer srv.Close()
			f := newFixture(t, srv.URL, netguard.Options{AllowPrivate: true})
			task, err := f.wait(t, f.send(t, "x"))
			if switchboard.ErrorCode(err) != switchboard.EINVALIDAGENTRESPONSE || task.State() != a2a.TaskStateFailed {
				t.Fatalf("err %v, state %s", err, task.State())
			}
		})
	}
}

// TestDeliverRefusedByGuard checks that a webhook aimed at a private
// address is never called, and that its task fails at the deadline.
func TestDeliverRefusedByGuard(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	f := newFixture(t, srv.URL, netguard.Options{}, time.Second) // private networks not allowed; a second, so that a loaded machine still attempts once
	task, err := f.wait(t, f.send(t, "x"))
	must(t, err)
	if task.State() != a2a.TaskStateFailed || calls.Load() != 0 {
		t.Fatalf("state %s, %d calls reached the private endpoint", task.State(), calls.Load())
	}
	ds, err := f.db.FindDeliveries(context.Background(), switchboard.DeliveryFilter{AgentID: &f.agent.ID})
	must(t, err)
	if len(ds) != 1 || ds[0].Attempts < 1 || ds[0].State != switchboard.DeliveryFailed || !strings.Contains(ds[0].LastError, "refused") {
		t.Fatalf("delivery %+v", ds)
	}
	// The peer reads why, without the endpoint's address.
	reason := switchboard.MessageText(task.A2A.Status.Message)
	const want = "not delivered: the webhook did not answer successfully within 1s: last attempt: could not connect: refused by the network guard"
	if !strings.HasPrefix(reason, want) || strings.Contains(reason, strings.TrimPrefix(srv.URL, "http://")) {
		t.Fatalf("reason %q, want %q…", reason, want)
	}
}

// TestDeliverErrorsLeaveOutURL checks that a failed attempt is described
// without the endpoint's URL, host or port: the text becomes the delivery's
// last error, which the task's peer reads when the task fails.
func TestDeliverErrorsLeaveOutURL(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/hang/") {
			<-hang
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	defer close(hang) // before srv.Close, which waits for the handler
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cases := map[string]struct {
		endpoint string
		want     string
	}{
		"Status":  {srv.URL + "/secret-token/", "503 Service Unavailable"},
		"Refused": {closed.URL + "/secret-token/", "could not connect: connection refused"},
		"Timeout": {srv.URL + "/hang/secret-token/", "no answer in time"},
	}
	d := &webhook.Deliverer{Client: netguard.NewClient(netguard.Options{AllowPrivate: true})}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			g := &switchboard.Agent{ID: "g", Endpoint: tc.endpoint, WebhookSecret: "s"}
			_, err := d.Deliver(ctx, g, offer())
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			u, _ := url.Parse(tc.endpoint)
			if strings.Contains(err.Error(), "secret-token") || strings.Contains(err.Error(), u.Host) {
				t.Fatalf("error %q names the endpoint", err)
			}
		})
	}
}

// offer returns an offer of a new task with one message.
func offer() *switchboard.Offer {
	msg := &a2a.Message{ID: "m1", Role: a2a.MessageRoleUser, TaskID: "t1", ContextID: "c1", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}
	return &switchboard.Offer{
		Delivery: &switchboard.Delivery{ID: "d1", TaskID: "t1", Kind: switchboard.DeliverTask, MessageID: "m1"},
		Send:     &a2a.SendMessageRequest{Message: msg},
		Task:     &switchboard.Task{A2A: a2a.Task{ID: "t1", ContextID: "c1", History: []*a2a.Message{msg}}, PeerLabel: "bob"},
	}
}
