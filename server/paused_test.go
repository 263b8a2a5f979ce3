package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/facetest"
	assembly "github.com/switchboard-dev/switchboard/server"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/connector"
	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/mcpserver"
	"github.com/switchboard-dev/switchboard/membus"
)

// newNetworkServer is a harness that serves every way an agent sends work
// on the network: POST /tasks, the addresses, MCP, and the hub at
// /connect with SendTask.
func newNetworkServer(t *testing.T) *facetest.Harness {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus := membus.New()
	var connect *hub.Hub
	h := facetest.New(t, facetest.WithDeps(func(d *assembly.APIDeps) {
		connect = hub.New(hub.Deps{Service: d.Tasks, Agents: d.Agents, Tokens: d.Tokens, Bus: bus, Logger: log,
			InstanceID: d.Tasks.InstanceID, Network: d.Network}, hub.Config{})
		d.Connect = connect
		d.MCP = mcpserver.New(mcpserver.Deps{Accounts: d.Accounts, Agents: d.Agents, Tokens: d.Tokens, Tasks: d.Tasks,
			Outbox: d.Outbox, Network: d.Network, Limiter: d.Limiter, Logger: log}, mcpserver.Config{})
	}))
	// Registered after the harness's, so run before it: the connections
	// end while the store is open.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = connect.Shutdown(ctx)
		_ = bus.Close()
	})
	return h
}

// mcpSession opens an MCP client session on the agent's endpoint.
func mcpSession(h *facetest.Harness, g *switchboard.Agent, ownerToken string) *mcp.ClientSession {
	h.T.Helper()
	r := h.Owner("POST", "/agents/"+g.Handle+"/mcp-tokens", ownerToken, map[string]any{"label": "claude"})
	if r.Status != http.StatusCreated {
		h.T.Fatalf("mint an MCP token: %d %s", r.Status, r.Body)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.Addr(g) + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: facetest.BearerTransport{Token: r.JSON["token"].(string)}}}, nil)
	facetest.Must(h.T, err)
	h.T.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectorOf runs a connector client for the agent token, connected.
func connectorOf(h *facetest.Harness, token string) *connector.Client {
	h.T.Helper()
	connected := make(chan struct{}, 1)
	c := &connector.Client{URLs: []string{h.Server.URL}, Token: token, OnConnect: func(string) {
		select {
		case connected <- struct{}{}:
		default:
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	h.T.Cleanup(func() { cancel(); <-done })
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		h.T.Fatal("the connector did not connect")
	}
	return c
}

// TestPausedAgentOnEveryPath: an agent that does not accept tasks now
// (accepts_tasks false) is treated alike on every path an agent or a peer
// sends work on. Work addressed to it by name (its A2A address, with a
// peer token or another agent's token; POST /tasks, MCP send and the
// connector's SendTask with "to") is accepted and waits for it, and is
// offered to it once it accepts tasks again. Discovery (a community's
// address; POST /tasks, MCP send_to_community and SendTask without "to")
// never chooses it: no_agent_found, "none accepting".
func TestPausedAgentOnEveryPath(t *testing.T) {
	h := newNetworkServer(t)
	ctx := context.Background()
	_, alice := h.Account("alice")
	me, meToken := h.NetAgent(alice, "me", "connector", "", "lab")
	paused, _ := h.NetAgent(alice, "paused", "connector", "code", "lab", "solo")
	if r := h.Owner("PATCH", "/agents/paused", alice, map[string]any{"accepts_tasks": false}); r.Status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	holder := h.Live(paused)
	peer := h.PeerToken(paused, "bob")
	r := h.Owner("POST", "/communities/solo/tokens", alice, map[string]any{"label": "carol"})
	if r.Status != http.StatusCreated {
		t.Fatalf("a community token: %d %s", r.Status, r.Body)
	}
	carol := r.JSON["token"].(string)
	cs := mcpSession(h, me, alice)
	conn := connectorOf(h, meToken)

	// at sends an A2A SendMessage that returns at once.
	at := func(url, token, text string) (string, error) {
		msg := facetest.UserMessage(switchboard.NewID(), text)
		msg["configuration"] = map[string]any{"returnImmediately": true}
		msg["message"].(map[string]any)["metadata"] = map[string]any{"skill": "code"}
		r := h.Call(url, token, "SendMessage", msg)
		if e, ok := r.JSON["error"]; ok {
			return "", errors.New(string(r.Body) + " " + jsonString(e))
		}
		task, _ := r.JSON["result"].(map[string]any)["task"].(map[string]any)
		id, _ := task["id"].(string)
		return id, nil
	}
	post := func(body map[string]any) (string, error) {
		r := h.Owner("POST", "/tasks", meToken, body)
		if r.Status != http.StatusAccepted {
			return "", errors.New(string(r.Body))
		}
		return r.JSON["task_id"].(string), nil
	}
	tool := func(name string, args map[string]any) (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		switch {
		case err != nil:
			return "", err
		case res.IsError:
			var b strings.Builder
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
			return "", errors.New(b.String())
		}
		out, _ := res.StructuredContent.(map[string]any)
		id, _ := out["taskId"].(string)
		return id, nil
	}
	sendTask := func(t connector.TaskRequest) (string, error) {
		t.Request = &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("work"))}
		task, _, err := conn.SendTask(ctx, t)
		if err != nil {
			return "", err
		}
		return string(task.ID), nil
	}

	paths := []struct {
		name   string
		byName bool // addressed to the paused agent; else discovery
		send   func() (string, error)
	}{
		{"address/peer-token", true, func() (string, error) { return at(h.Addr(paused), peer, "hello") }},
		{"address/agent-token", true, func() (string, error) { return at(h.Addr(paused), meToken, "hello") }},
		{"POST /tasks/to", true, func() (string, error) {
			return post(map[string]any{"to": "paused", "payload": map[string]any{"message": "hello"}})
		}},
		{"MCP send", true, func() (string, error) { return tool("send", map[string]any{"to": "paused", "text": "hello"}) }},
		{"SendTask/to", true, func() (string, error) { return sendTask(connector.TaskRequest{To: "paused"}) }},
		{"community address", false, func() (string, error) { return at(h.Server.URL+"/c/solo", carol, "anyone?") }},
		{"POST /tasks/discovery", false, func() (string, error) {
			return post(map[string]any{"community": "lab", "skill": "code", "payload": map[string]any{"message": "anyone?"}})
		}},
		{"MCP send_to_community", false, func() (string, error) {
			return tool("send_to_community", map[string]any{"community": "lab", "skill": "code", "text": "anyone?"})
		}},
		{"SendTask/discovery", false, func() (string, error) {
			return sendTask(connector.TaskRequest{Community: "lab", Skill: "code"})
		}},
	}
	waiting := map[a2a.TaskID]string{}
	for _, p := range paths {
		id, err := p.send()
		if !p.byName {
			if err == nil || !strings.Contains(err.Error(), "none accepting") {
				t.Errorf("%s: discovery chose a paused agent, or failed otherwise: task %q, %v", p.name, id, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: work sent by name to a paused agent was refused: %v", p.name, err)
			continue
		}
		task, err := h.DB.FindTaskByID(ctx, a2a.TaskID(id))
		facetest.Must(t, err)
		if task.AgentID != paused.ID || task.State() != a2a.TaskStateSubmitted {
			t.Errorf("%s: task on %s in %s, want on the paused agent, submitted", p.name, task.AgentID, task.State())
		}
		waiting[task.ID()] = p.name
	}

	// Paused, nothing is offered; accepting again, all that waited is.
	offers, err := h.Tasks.ClaimOffers(ctx, h.AgentByHandle("paused"), holder, 64)
	facetest.Must(t, err)
	if len(offers) != 0 {
		t.Fatalf("a paused agent was offered %d tasks", len(offers))
	}
	if r := h.Owner("PATCH", "/agents/paused", alice, map[string]any{"accepts_tasks": true}); r.Status != http.StatusOK {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	offers, err = h.Tasks.ClaimOffers(ctx, h.AgentByHandle("paused"), holder, 64)
	facetest.Must(t, err)
	for _, o := range offers {
		delete(waiting, o.Task.ID())
	}
	if len(waiting) != 0 {
		t.Fatalf("not offered once the agent accepts tasks again: %v", waiting)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
