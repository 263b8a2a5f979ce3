package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
)

// notHere is the end of the refusal of a URL of another deployment on the
// network, for the sending agent "me".
const notHere = " is not an address of this deployment; the network reaches only agents here: to send to a remote agent, the owner of me sends it: switchboard send --agent me URL --text TEXT"

// tasksOf counts the tasks of an agent.
func (h *harness) tasksOf(g *switchboard.Agent) int {
	h.t.Helper()
	tasks, _, err := h.db.FindTasks(context.Background(), switchboard.TaskFilter{AgentID: &g.ID, NoTotal: true})
	must(h.t, err)
	return len(tasks)
}

// TestNetworkTaskURLOfAnotherDeployment: POST /tasks to a URL reaches an
// agent of this deployment only when the URL is its address on this
// deployment's origin (here the request's: no public URL is configured).
// A URL of another host, scheme or port, with credentials, or a path of
// this origin that is no address is 400, whatever handle it holds, and
// nothing is sent.
func TestNetworkTaskURLOfAnotherDeployment(t *testing.T) {
	h := newHarness(t)
	_, alice := h.account("alice")
	_, me := h.netAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.netAgent(alice, "worker", "connector", "code", "lab")
	h.live(worker)
	post := func(to string) *response {
		return h.owner("POST", "/tasks", me, map[string]any{"to": to, "payload": map[string]any{"message": "hi"}})
	}
	host := strings.TrimPrefix(h.srv.URL, "http://")
	_, port, err := net.SplitHostPort(host)
	must(t, err)
	for _, to := range []string{
		"https://other.example/a/worker",
		"https://" + host + "/a/worker",          // another scheme
		"http://127.0.0.2:" + port + "/a/worker", // another host, the same port
		"http://localhost:1/a/worker",            // another port
		"http://user@" + host + "/a/worker",      // credentials
		h.srv.URL + "/x/a/worker",                // this origin, no address of it
		h.srv.URL + "/a/worker/.well-known/agent-card.json",
	} {
		if r := post(to); r.status != http.StatusBadRequest || r.json["error"] != to+notHere {
			t.Errorf("to %s: %d %s", to, r.status, r.body)
		}
	}
	if n := h.tasksOf(worker); n != 0 {
		t.Fatalf("%d tasks reached the local agent of the handle, want 0", n)
	}
	for i, to := range []string{h.srv.URL + "/a/worker", h.srv.URL + "/a/worker/", "HTTP://" + strings.ToUpper(host) + "/a/Worker"} {
		if r := post(to); r.status != http.StatusAccepted || r.json["agent"] != "worker" {
			t.Fatalf("to %s: %d %s", to, r.status, r.body)
		}
		if n := h.tasksOf(worker); n != i+1 {
			t.Fatalf("%d tasks, want %d", n, i+1)
		}
	}
}

// TestNetworkTaskURLPublicURL: with a public URL configured, this
// deployment's addresses are under it (its path too), not the Host a
// request names.
func TestNetworkTaskURLPublicURL(t *testing.T) {
	const public = "https://switchboard.example/sb"
	h := newHarness(t, withConfig(func(c *httpapi.Config) { c.PublicURL = public }))
	_, alice := h.account("alice")
	_, me := h.netAgent(alice, "me", "connector", "", "lab")
	worker, _ := h.netAgent(alice, "worker", "connector", "code", "lab")
	post := func(to string) *response {
		return h.owner("POST", "/tasks", me, map[string]any{"to": to, "payload": map[string]any{"message": "hi"}})
	}
	for _, to := range []string{h.srv.URL + "/a/worker", "https://switchboard.example/a/worker", "https://switchboard.example/sbx/a/worker"} {
		if r := post(to); r.status != http.StatusBadRequest || r.json["error"] != to+notHere {
			t.Errorf("to %s: %d %s", to, r.status, r.body)
		}
	}
	if n := h.tasksOf(worker); n != 0 {
		t.Fatalf("%d tasks, want 0", n)
	}
	if r := post("HTTPS://Switchboard.Example:443/sb/a/worker"); r.status != http.StatusAccepted || r.json["agent"] != "worker" {
		t.Fatalf("to the public address: %d %s", r.status, r.body)
	}
}
