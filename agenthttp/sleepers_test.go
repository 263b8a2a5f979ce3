package agenthttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/facetest"
)

// TestSleepingAgentsOnTheNetwork: an inbox agent has an agent token from
// its creation, and with it sends by name and by discovery, follows its
// task and reads its directory; discovery chooses an agent that sleeps
// only when the sender asks (wake_sleepers, on POST /tasks and at the
// community's address), and the directory says who is live and who can
// be woken.
func TestSleepingAgentsOnTheNetwork(t *testing.T) {
	h := facetest.New(t, facetest.WithWakes(t, false))
	_, alice := h.Account("alice")
	_, desk := h.NetAgent(alice, "desk", "inbox", "", "lab")
	worker, _ := h.NetAgent(alice, "worker", "connector", "code", "lab")
	sleepy, _ := h.NetAgent(alice, "sleepy", "inbox", "translate", "lab")
	h.NetAgent(alice, "nowake", "inbox", "translate", "lab")
	if !strings.HasPrefix(desk, "sba_") {
		t.Fatalf("the inbox agent's token: %q", desk)
	}
	if r := h.Owner("PUT", "/agents/sleepy/wake", alice, map[string]any{"url": "https://wake.example/sleepy"}); r.Status != http.StatusOK {
		t.Fatalf("wake: %d %s", r.Status, r.Body)
	}
	post := func(token string, body map[string]any) *facetest.Response {
		return h.Owner("POST", "/tasks", token, body)
	}

	// By name, with the inbox agent's own token; then it follows the task.
	r := post(desk, map[string]any{"to": "worker", "payload": map[string]any{"message": "fix it"}})
	if r.Status != http.StatusAccepted || r.JSON["agent"] != "worker" {
		t.Fatalf("by name: %d %s", r.Status, r.Body)
	}
	if f := h.Owner("GET", "/tasks/"+r.JSON["task_id"].(string), desk, nil); f.Status != http.StatusOK || f.JSON["from"] != "desk" {
		t.Fatalf("follow: %d %s", f.Status, f.Body)
	}

	// By discovery: nobody live; the reason counts the one that sleeps.
	r = post(desk, map[string]any{"community": "lab", "skill": "translate", "payload": map[string]any{"message": "bonjour"}})
	if r.Status != http.StatusNotFound || !strings.Contains(r.JSON["reason"].(string), "1 of them sleep and can be woken") ||
		!strings.Contains(r.JSON["reason"].(string), "wake_sleepers") {
		t.Fatalf("without wake_sleepers: %d %s", r.Status, r.Body)
	}
	r = post(desk, map[string]any{"community": "lab", "skill": "translate", "wake_sleepers": true, "payload": map[string]any{"message": "bonjour"}})
	if r.Status != http.StatusAccepted || r.JSON["agent"] != "sleepy" {
		t.Fatalf("with wake_sleepers: %d %s", r.Status, r.Body)
	}
	wakes, err := h.DB.FindWakes(context.Background(), sleepy.ID, 10)
	facetest.Must(t, err)
	if len(wakes) != 1 {
		t.Fatalf("sleepy's wakes: %d", len(wakes))
	}

	// The directory, read with the inbox agent's token.
	var dir struct {
		Agents []map[string]any `json:"agents"`
	}
	r = h.Owner("GET", "/directory", desk, nil)
	facetest.MustJSON(t, r.Body, &dir)
	got := map[string]string{}
	for _, e := range dir.Agents {
		got[e["handle"].(string)] = strings.Join([]string{boolWord(e["live"]), boolWord(e["wakeable"])}, ",")
	}
	want := map[string]string{"worker": "false,false", "sleepy": "false,true", "nowake": "false,false"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: live,wakeable = %s, want %s (%s)", k, got[k], v, r.Body)
		}
	}

	// At the community's address, with a peer token of the community.
	tr := h.Owner("POST", "/communities/lab/tokens", alice, map[string]any{"label": "carol"})
	carol, _ := tr.JSON["token"].(string)
	msg := facetest.UserMessage("m-wake", "hola")
	msg["configuration"] = map[string]any{"returnImmediately": true}
	msg["message"].(map[string]any)["metadata"] = map[string]any{"skill": "translate"}
	facetest.WantRPCError(t, h.Call(h.Server.URL+"/c/lab", carol, "SendMessage", msg), http.StatusOK, -32051)
	msg["message"].(map[string]any)["messageId"] = "m-wake-2"
	msg["message"].(map[string]any)["metadata"] = map[string]any{"skill": "translate", "wake_sleepers": true}
	res := h.Call(h.Server.URL+"/c/lab", carol, "SendMessage", msg).Result(t)
	stored, err := h.DB.FindTaskByID(context.Background(), a2a.TaskID(res["task"].(map[string]any)["id"].(string)))
	facetest.Must(t, err)
	if stored.AgentID != sleepy.ID || stored.PeerKind != switchboard.PeerCommunity {
		t.Fatalf("the community's address chose %s", stored.AgentID)
	}
	_ = worker
}

func boolWord(v any) string {
	if b, ok := v.(bool); ok && b {
		return "true"
	}
	return "false"
}
