package agenthttp_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// notHere is the end of the refusal of a URL of another deployment on the
// network, for the sending agent "me".
const notHere = " is not an address of this deployment; the network reaches only agents here: to send to a remote agent, the owner of me sends it: switchboard send --agent me URL --text TEXT"

// tasksOf counts the tasks of an agent.
func tasksOf(h *facetest.Harness, g *switchboard.Agent) int {
	h.T.Helper()
	tasks, _, err := h.DB.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID, NoTotal: true})
	facetest.Must(h.T, err)
	return len(tasks)
}

// TestNetworkTaskURLOfAnotherDeployment: POST /tasks to a URL reaches an
// agent of this deployment only when the URL is its address on this
// deployment's origin (here the request's: no public URL is configured).
// A URL of another host, scheme or port, with credentials, or a path of
// this origin that is no address is 400, whatever handle it holds, and
// nothing is sent.
func TestNetworkTaskURLOfAnotherDeployment(t *testing.T) {
	h := facetest.New(t)
	_, alice := h.Account("alice")
	_, me := h.NetAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.NetAgent(alice, "worker", "connector", "code", "lab")
	h.Live(worker)
	post := func(to string) *facetest.Response {
		return h.Owner("POST", "/tasks", me, map[string]any{"to": to, "payload": map[string]any{"message": "hi"}})
	}
	host := strings.TrimPrefix(h.Server.URL, "http://")
	_, port, err := net.SplitHostPort(host)
	facetest.Must(t, err)
	for _, to := range []string{
		"https://other.example/a/worker",
		"https://" + host + "/a/worker",          // another scheme
		"http://127.0.0.2:" + port + "/a/worker", // another host, the same port
		"http://localhost:1/a/worker",            // another port
		"http://user@" + host + "/a/worker",      // credentials
		h.Server.URL + "/x/a/worker",             // this origin, no address of it
		h.Server.URL + "/a/worker/.well-known/agent-card.json",
	} {
		if r := post(to); r.Status != http.StatusBadRequest || r.JSON["error"] != to+notHere {
			t.Errorf("to %s: %d %s", to, r.Status, r.Body)
		}
	}
	if n := tasksOf(h, worker); n != 0 {
		t.Fatalf("%d tasks reached the local agent of the handle, want 0", n)
	}
	for i, to := range []string{h.Server.URL + "/a/worker", h.Server.URL + "/a/worker/", "HTTP://" + strings.ToUpper(host) + "/a/Worker"} {
		if r := post(to); r.Status != http.StatusAccepted || r.JSON["agent"] != "worker" {
			t.Fatalf("to %s: %d %s", to, r.Status, r.Body)
		}
		if n := tasksOf(h, worker); n != i+1 {
			t.Fatalf("%d tasks, want %d", n, i+1)
		}
	}
}

// TestNetworkTaskURLPublicURL: with a public URL configured, this
// deployment's addresses are under it (its path too), not the Host a
// request names.
func TestNetworkTaskURLPublicURL(t *testing.T) {
	const public = "https://switchboard.example/sb"
	h := facetest.New(t, facetest.WithConfig(func(c *httpapi.Config) { c.PublicURL = public }))
	_, alice := h.Account("alice")
	_, me := h.NetAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.NetAgent(alice, "worker", "connector", "code", "lab")
	post := func(to string) *facetest.Response {
		return h.Owner("POST", "/tasks", me, map[string]any{"to": to, "payload": map[string]any{"message": "hi"}})
	}
	for _, to := range []string{h.Server.URL + "/a/worker", "https://switchboard.example/a/worker", "https://switchboard.example/sbx/a/worker"} {
		if r := post(to); r.Status != http.StatusBadRequest || r.JSON["error"] != to+notHere {
			t.Errorf("to %s: %d %s", to, r.Status, r.Body)
		}
	}
	if n := tasksOf(h, worker); n != 0 {
		t.Fatalf("%d tasks, want 0", n)
	}
	if r := post("HTTPS://Switchboard.Example:443/sb/a/worker"); r.Status != http.StatusAccepted || r.JSON["agent"] != "worker" {
		t.Fatalf("to the public address: %d %s", r.Status, r.Body)
	}
}
