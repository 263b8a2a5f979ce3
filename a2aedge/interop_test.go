package a2aedge_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// These tests drive a real server with the official a2a-go client, in both
// protocol versions, the way an outside agent would.

// v1Client resolves the card with a2a-go's default (1.0) parser and returns
// a client that speaks 1.0.
func v1Client(t *testing.T, h *facetest.Harness, addr, token string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, addr)
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(facetest.AuthClient(token)))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// v03Client resolves the card with a2a-go's 0.3 parser and returns a client
// that can only speak 0.3.
func v03Client(t *testing.T, h *facetest.Harness, addr, token, cardPath string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: http.DefaultClient, CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, addr, agentcard.WithPath(cardPath))
	if err != nil {
		t.Fatalf("resolve card: %v", err)
	}
	f := a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: facetest.AuthClient(token)}))
	c, err := f.CreateFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

func TestInteropA2AGo(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	clients := map[string]func() *a2aclient.Client{
		"v1":          func() *a2aclient.Client { return v1Client(t, h, h.Addr(g), tok) },
		"v03":         func() *a2aclient.Client { return v03Client(t, h, h.Addr(g), tok, "/.well-known/agent-card.json") },
		"v03PureCard": func() *a2aclient.Client { return v03Client(t, h, h.Addr(g), tok, "/.well-known/agent.json") },
	}
	for name, newClient := range clients {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := newClient()
			defer c.Destroy()

			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello from "+name))})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateSubmitted {
				t.Fatalf("send: %#v", res)
			}
			stored, err := h.DB.FindTaskByID(ctx, task.ID)
			facetest.Must(t, err)
			if want := map[string]string{"v1": "1.0", "v03": "0.3", "v03PureCard": "0.3"}[name]; string(stored.Protocol) != want {
				t.Fatalf("the client spoke A2A %s, want %s", stored.Protocol, want)
			}
			h.Reply(string(task.ID), a2a.TaskStateCompleted, "hi "+name)
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text() != "hi "+name {
				t.Fatalf("get: %+v", got)
			}

			// Streaming: the agent's answer reaches the open stream.
			var events []a2a.Event
			var streamErr error
			done := make(chan struct{})
			started := make(chan a2a.TaskID, 1)
			go func() {
				defer close(done)
				req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream"))}
				for ev, err := range c.SendStreamingMessage(ctx, req) {
					if err != nil {
						streamErr = err
						return
					}
					if t, ok := ev.(*a2a.Task); ok {
						started <- t.ID
					}
					events = append(events, ev)
				}
			}()
			var id a2a.TaskID
			select {
			case id = <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("stream did not start")
			}
			h.Reply(string(id), a2a.TaskStateCompleted, "streamed")
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("stream did not end")
			}
			if streamErr != nil {
				t.Fatal(streamErr)
			}
			last, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
			if !ok || last.Status.State != a2a.TaskStateCompleted || len(events) != 3 {
				t.Fatalf("stream events: %d, last %#v", len(events), events[len(events)-1])
			}

			// Subscribe to a waiting task, then cancel it.
			res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("cancel me"))})
			if err != nil {
				t.Fatal(err)
			}
			waiting := res.(*a2a.Task)
			subDone := make(chan a2a.TaskState, 1)
			subStarted := make(chan struct{})
			go func() {
				var last a2a.TaskState
				first := true
				for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: waiting.ID}) {
					if err != nil {
						break
					}
					if first {
						close(subStarted)
						first = false
					}
					if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
						last = st.Status.State
					}
				}
				subDone <- last
			}()
			select {
			case <-subStarted:
			case <-time.After(5 * time.Second):
				t.Fatal("subscription did not start")
			}
			canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: waiting.ID})
			if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("cancel: %v %+v", err, canceled)
			}
			select {
			case st := <-subDone:
				if st != a2a.TaskStateCanceled {
					t.Fatalf("subscriber saw %s", st)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("subscription did not end")
			}

			// Errors arrive as the SDK's typed errors.
			_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("unknown task: %v", err)
			}
			_, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Fatalf("cancel finished task: %v", err)
			}
		})
	}
}

func TestInteropA2AGoListTasks(t *testing.T) {
	h := facetest.New(t)
	g := h.Agent("alice")
	tok := h.PeerToken(g, "bob")
	c := v1Client(t, h, h.Addr(g)+"/", tok)
	ctx := context.Background()
	for range 3 {
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x"))}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Tasks) != 2 || resp.TotalSize != 3 || resp.NextPageToken == "" {
		t.Fatalf("page 1: %+v", resp)
	}
	resp2, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 2, PageToken: resp.NextPageToken})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp2.Tasks) != 1 || resp2.NextPageToken != "" {
		t.Fatalf("page 2: %+v", resp2)
	}
	// A wrong token is an authentication error, not a silent failure.
	bad := v1Client(t, h, h.Addr(g), "sbp_wrong")
	if _, err := bad.GetTask(ctx, &a2a.GetTaskRequest{ID: "x"}); err == nil {
		t.Fatal("wrong token accepted")
	}
}
