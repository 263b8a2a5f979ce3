package front

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/switchboard-dev/switchboard"
)

// reflector is an A2A server on loopback (https, JSON-RPC 1.0 or 0.3) that
// records the metadata of every message it receives and, as a careless
// server may, reflects the headers of its requests into its card and its
// answers: as they came, and base64-encoded in both alphabets.
type reflector struct {
	srv *httptest.Server

	mu       sync.Mutex
	messages []map[string]any // guarded by mu: the metadata of each message received
	requests []map[string]any // guarded by mu: the metadata of each request received
	followUp bool             // guarded by mu: a message continued a task it knows
}

// reflectedHeaders are the headers a reflector reflects.
var reflectedHeaders = []string{"Authorization", "CF-Access-Client-Secret", "X-Basic"}

// reflection is what a reflector writes of the headers h: every value of
// reflectedHeaders as it came, then in base64 (standard with padding,
// URL-safe without), the bearer token inside "Basic base64(user:token)",
// and the value of each header inside a longer base64 text.
func reflection(get func(string) string) string {
	var out []string
	for _, name := range reflectedHeaders {
		v := get(name)
		if v == "" {
			continue
		}
		token, _ := strings.CutPrefix(v, "Bearer ")
		out = append(out, name+": "+v,
			"std="+base64.StdEncoding.EncodeToString([]byte(token)),
			"url="+base64.RawURLEncoding.EncodeToString([]byte(token)),
			"basic=Basic "+base64.StdEncoding.EncodeToString([]byte("user:"+token)),
			"inside="+base64.StdEncoding.EncodeToString([]byte("p="+token+";")))
	}
	sort.Strings(out)
	return strings.Join(out, " | ")
}

// newReflector starts a reflector speaking version ("1.0" or "0.3"),
// streaming or not.
func newReflector(t *testing.T, version string, streaming bool) *reflector {
	t.Helper()
	u := &reflector{}
	handler := a2asrv.NewHandler(u)
	mux := http.NewServeMux()
	u.srv = httptest.NewTLSServer(mux)
	t.Cleanup(u.srv.Close)
	card := func(r *http.Request) *a2a.AgentCard {
		said := reflection(r.Header.Get)
		return &a2a.AgentCard{Name: "Reflector " + said, Description: "called with " + said, Version: "1.0.0",
			SupportedInterfaces: []*a2a.AgentInterface{{URL: u.srv.URL + "/invoke", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.ProtocolVersion(version)}},
			Capabilities:        a2a.AgentCapabilities{Streaming: streaming}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: said, Tags: []string{"test"}, Examples: []string{said}}}}
	}
	if version == "0.3" {
		mux.Handle("/invoke", a2av0.NewJSONRPCHandler(handler))
		mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, r *http.Request) {
			a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card(r))).ServeHTTP(w, r)
		})
	} else {
		mux.Handle("/invoke", a2asrv.NewJSONRPCHandler(handler))
		mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, r *http.Request) {
			a2asrv.NewStaticAgentCardHandler(card(r)).ServeHTTP(w, r)
		})
	}
	return u
}

// Execute records the message's metadata and answers with what it was
// sent: "ask" with a question, anything else with an artifact (a text, a
// file and data) and a status message.
func (u *reflector) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		u.mu.Lock()
		u.messages = append(u.messages, ec.Message.Metadata)
		u.requests = append(u.requests, ec.Metadata)
		u.followUp = u.followUp || ec.StoredTask != nil
		u.mu.Unlock()
		said := reflection(func(name string) string {
			if v, ok := ec.ServiceParams.Get(name); ok && len(v) > 0 {
				return v[0]
			}
			return ""
		})
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		working := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("working for "+said))
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, working), nil) {
			return
		}
		if text == "ask" && ec.StoredTask == nil {
			q := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("which one, "+said+"?"))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, q), nil)
			return
		}
		art := a2a.NewArtifactEvent(ec, a2a.NewTextPart("you sent "+said),
			&a2a.Part{Content: a2a.Raw("raw: " + said), MediaType: "text/plain", Filename: said},
			a2a.NewDataPart(map[string]any{"headers": said, said: []any{said}}))
		art.Artifact.Name, art.Artifact.Description = said, said
		art.Metadata = map[string]any{"echo": said}
		if !yield(art, nil) {
			return
		}
		done := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("done: "+said))
		done.Metadata = map[string]any{"echo": said}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, done), nil)
	}
}

// Cancel cancels the task.
func (u *reflector) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// received returns the metadata of the messages and requests received.
func (u *reflector) received() (messages, requests []map[string]any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.messages...), append([]map[string]any(nil), u.requests...)
}

// forwarderTo returns a front's forwarder of the reflector, with creds.
func forwarderTo(t *testing.T, u *reflector, creds switchboard.FrontCredentials) *Forwarder {
	t.Helper()
	target := u.srv.URL + "/invoke"
	client, err := NewClient(loopbackTransport(u.srv, 0), target, creds)
	if err != nil {
		t.Fatal(err)
	}
	fw := NewForwarder(Config{Target: target, WholeURL: true, FallbackCard: true, Blocking: true, HTTP: client,
		Timeout: time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Secrets: CredentialSecrets(creds)})
	t.Cleanup(fw.Close)
	return fw
}

// forwarded is what one job relayed back: its events as JSON, and the
// reason it failed with, if it did.
type forwarded struct {
	events          []string
	failure         string
	upTask, upCtxID string
}

// forward relays one message from the peer bob, and returns what came
// back. upstream names the upstream's task for a follow-up.
func forward(t *testing.T, fw *Forwarder, msg *a2a.Message, upstream *forwarded) *forwarded {
	t.Helper()
	out := &forwarded{}
	j := &Job{TaskID: "our-task", ContextID: "our-ctx", NewTask: upstream == nil, From: "bob", Message: msg,
		Update: func(ev a2a.Event) error {
			out.events = append(out.events, jsonText(t, ev))
			return nil
		},
		Fail: func(reason string, _ error) { out.failure = reason },
		Named: func(theirs a2a.TaskInfo, _ bool) {
			if theirs.TaskID != "" {
				out.upTask, out.upCtxID = string(theirs.TaskID), theirs.ContextID
			}
		},
	}
	if upstream != nil {
		j.UpstreamTaskID, j.UpstreamContextID = a2a.TaskID(upstream.upTask), upstream.upCtxID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fw.Handle(ctx, j); err != nil {
		t.Fatalf("forward: %v (failure %q)", err, out.failure)
	}
	return out
}

// jsonText returns v in JSON, with no character escaped that need not be
// (json.Marshal writes & as \u0026): what a test searches for a value.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
