package network_test

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/wake"
)

// sleeper stores an approved inbox agent of the owner offering skill in
// the communities, with a wake configured when withWake is set.
func (w *world) sleeper(handle, skill string, withWake bool, communities ...string) *switchboard.Agent {
	w.t.Helper()
	g := w.agent(handle, skill, communities...)
	inbox := switchboard.ModeInbox
	w.update(g, switchboard.AgentUpdate{Mode: &inbox})
	if withWake {
		must(w.t, w.db.SaveWakeConfig(context.Background(), &switchboard.WakeConfig{AgentID: g.ID,
			URL: "https://wake.example/" + handle, Preset: wake.PresetGeneric, Debounce: time.Second}))
	}
	return g
}

// failWake records a failed wake of the agent: its wake no longer works.
func (w *world) failWake(g *switchboard.Agent) {
	w.t.Helper()
	ctx := context.Background()
	ok, err := w.db.EnqueueWake(ctx, &switchboard.WakeRequest{AgentID: g.ID, ContextID: "c-" + switchboard.NewID(),
		Kind: switchboard.WakeInbound, Preview: "x"})
	must(w.t, err)
	if !ok {
		w.t.Fatal("no wake queued")
	}
	w.advance(2 * time.Second)
	ws, err := w.db.ClaimWakes(ctx, "h", 10, time.Minute)
	must(w.t, err)
	for _, x := range ws {
		_, err := w.db.FinishWake(ctx, x.ID, "h", switchboard.WakeFailed, 404, "not found")
		must(w.t, err)
	}
}

// TestWakeSleepers: discovery chooses only live agents unless the sender
// allows a sleeper; then, with none live, it chooses an inbox agent whose
// wake works, fewest unfinished tasks first; the task waits in its inbox
// and its wake is queued. no_agent_found says how many sleep.
func TestWakeSleepers(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	me := w.agent("me", "", "lab")
	sleepy := w.sleeper("sleepy", "translate", true, "lab")
	w.sleeper("nowake", "translate", false, "lab")
	broken := w.sleeper("broken", "translate", true, "lab")
	w.failWake(broken)
	paused := w.sleeper("paused", "translate", true, "lab")
	no := false
	w.update(paused, switchboard.AgentUpdate{AcceptsTasks: &no})
	w.sleeper("elsewhere", "translate", true, "other")

	// The default: sleepers are never chosen, and the reason says so.
	_, err := w.choose(me, "lab", "translate")
	wantNoAgent(t, err, "1 of them sleep and can be woken")
	wantNoAgent(t, err, "wake_sleepers")

	send := func(text string) (*switchboard.Task, *switchboard.Agent, error) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
		return w.net.Send(ctx, me, network.Request{Target: network.Target{Community: "lab", Skill: "translate", WakeSleepers: true},
			Message: &a2a.SendMessageRequest{Message: msg}}, nil)
	}
	task, got, err := send("bonjour")
	must(t, err)
	if got.ID != sleepy.ID {
		t.Fatalf("chose %s, want sleepy (the only one whose wake works)", got.Handle)
	}
	if task.A2A.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("the task is %s, want it waiting in the inbox", task.A2A.Status.State)
	}
	wakes, err := w.db.FindWakes(ctx, sleepy.ID, 10)
	must(t, err)
	if len(wakes) != 1 || wakes[0].State != switchboard.WakePending {
		t.Fatalf("sleepy's wakes: %+v", wakes)
	}

	// Fewest unfinished tasks first: a second sleeper takes the next.
	sleepy2 := w.sleeper("sleepy2", "translate", true, "lab")
	if _, got, err = send("hola"); err != nil || got.ID != sleepy2.ID {
		t.Fatalf("the next: %v %v, want sleepy2 (no unfinished task)", got, err)
	}

	// One live (a connector, or a webhook agent) is chosen before any sleeper.
	live := w.agent("live", "translate", "lab")
	w.connect(live)
	if _, got, err = send("ciao"); err != nil || got.ID != live.ID {
		t.Fatalf("with one live: %v %v, want live", got, err)
	}

	// The directory says who sleeps and can be woken.
	ms, err := w.net.Directory(ctx, network.Viewer{Agent: me}, network.DirectoryQuery{Community: "lab"})
	must(t, err)
	want := map[string][2]bool{"sleepy": {false, true}, "sleepy2": {false, true}, "nowake": {false, false},
		"broken": {false, false}, "paused": {false, true}, "live": {true, false}}
	for _, m := range ms {
		lw, ok := want[m.Agent.Handle]
		if !ok {
			continue
		}
		delete(want, m.Agent.Handle)
		if got := [2]bool{m.Reach == switchboard.ReachLive, m.Wakeable}; got != lw {
			t.Errorf("%s: live, wakeable = %v, want %v", m.Agent.Handle, got, lw)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing from the directory: %v", want)
	}
}
