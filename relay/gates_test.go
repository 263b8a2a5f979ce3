package relay_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/relay"
)

// TestAgentConnectedReadsExpiry: a session whose expiry passed (its
// connection stopped renewing it) reads as not connected, on both reads
// the faces use, while one within its expiry reads as connected.
func TestAgentConnectedReadsExpiry(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	now := time.Now()
	f.svc.Now = func() time.Time { return now }
	must(t, f.svc.ConnectAgent(ctx, f.agent, &switchboard.AgentSession{AgentID: f.agent.ID, Holder: "conn-1",
		InstanceID: "i", ConnectedAt: now, ExpiresAt: now.Add(time.Minute)}, nil))
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{{now, true}, {now.Add(59 * time.Second), true}, {now.Add(time.Minute), false}, {now.Add(time.Hour), false}} {
		f.svc.Now = func() time.Time { return tc.at }
		live, err := f.svc.AgentConnected(ctx, f.agent.ID)
		must(t, err)
		since, live2, err := f.svc.AgentConnectedSince(ctx, f.agent.ID)
		must(t, err)
		if live != tc.want || live2 != tc.want {
			t.Errorf("%s after connecting: AgentConnected %v, AgentConnectedSince %v, want %v", tc.at.Sub(now), live, live2, tc.want)
		}
		if tc.want && !since.Equal(now) || !tc.want && !since.IsZero() {
			t.Errorf("%s after connecting: connected since %v", tc.at.Sub(now), since)
		}
	}
}

// TestAgentCannotTouchAnotherAgentsTask: an agent that names another
// agent's task (its id guessed or leaked) to fail it, apply an event to
// it or read it gets "not found", and the task is unchanged.
func TestAgentCannotTouchAnotherAgentsTask(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	task := f.send(t, "m1", "mine")
	other := &switchboard.Agent{ID: switchboard.NewID(), AccountID: f.agent.AccountID, Handle: "other", Mode: switchboard.ModeConnector, AcceptsTasks: true}
	must(t, f.db.CreateAgent(ctx, other))

	if err := f.svc.FailAgentTask(ctx, other, task.ID(), "taken over", false); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("FailAgentTask of another agent's task: %v", err)
	}
	done := &a2a.TaskStatusUpdateEvent{TaskID: task.ID(), Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if _, err := f.svc.ApplyAgentEvent(ctx, other, task.ID(), done); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("ApplyAgentEvent on another agent's task: %v", err)
	}
	if _, err := f.svc.AgentTask(ctx, other, task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("AgentTask of another agent's task: %v", err)
	}
	got, err := f.svc.GetTask(ctx, f.peer, task.ID())
	must(t, err)
	if got.State() != task.State() || got.Seq != task.Seq {
		t.Fatalf("the task changed: %s seq %d, was %s seq %d", got.State(), got.Seq, task.State(), task.Seq)
	}

	// Its own agent may: a finished task is then left as it is.
	must(t, f.svc.FailAgentTask(ctx, f.agent, task.ID(), "gave up", false))
	failed, err := f.svc.GetTask(ctx, f.peer, task.ID())
	must(t, err)
	if failed.State() != a2a.TaskStateFailed {
		t.Fatalf("failed by its agent: %s", failed.State())
	}
	must(t, f.svc.FailAgentTask(ctx, f.agent, task.ID(), "again", false))
	again, err := f.svc.GetTask(ctx, f.peer, task.ID())
	must(t, err)
	if again.Seq != failed.Seq {
		t.Fatalf("a finished task failed again: seq %d, was %d", again.Seq, failed.Seq)
	}
}

// TestPeerCannotTouchAnotherPeersTask: a task is its peer's alone:
// another peer of the same agent that names it (its id guessed or leaked)
// cannot read, continue, cancel, watch or reference it, nor list it.
func TestPeerCannotTouchAnotherPeersTask(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	task := f.send(t, "m1", "mine")
	eve := switchboard.Peer{AgentID: f.agent.ID, ID: "peer-eve", Label: "eve"}
	msg := func(id string, taskID a2a.TaskID, refs ...a2a.TaskID) *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: &a2a.Message{ID: id, TaskID: taskID, ReferenceTasks: refs, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}
	}

	if _, err := f.svc.GetTask(ctx, eve, task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("GetTask by another peer: %v", err)
	}
	if _, _, err := f.svc.SendMessage(ctx, f.agent, eve, msg("e1", task.ID()), switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("a follow-up by another peer: %v", err)
	}
	if _, err := f.svc.CancelTask(ctx, f.agent, eve, task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("CancelTask by another peer: %v", err)
	}
	if _, err := f.svc.SetPushConfig(ctx, eve, a2a.PushConfig{TaskID: task.ID(), URL: "https://eve.example.com/hook"}, switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Errorf("SetPushConfig by another peer: %v", err)
	}
	if _, _, err := f.svc.SendMessage(ctx, f.agent, eve, msg("e2", "", task.ID()), switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Errorf("a reference to another peer's task: %v", err)
	}
	page, err := f.svc.ListTasks(ctx, eve, relay.TaskQuery{})
	must(t, err)
	for _, got := range page.Tasks {
		if got.ID() == task.ID() {
			t.Errorf("another peer lists the task")
		}
	}
	got, err := f.svc.GetTask(ctx, f.peer, task.ID())
	must(t, err)
	if got.Seq != task.Seq || got.State() != task.State() {
		t.Fatalf("the task changed: %s seq %d", got.State(), got.Seq)
	}
	// Its own peer may.
	if _, _, err := f.svc.SendMessage(ctx, f.agent, f.peer, msg("m2", task.ID()), switchboard.ProtocolV1); err != nil {
		t.Fatalf("a follow-up by its peer: %v", err)
	}
}

// TestFinishedTaskTakesNoMore: a finished task takes no follow-up, no
// push configuration, no cancel and no answer unless forced.
func TestFinishedTaskTakesNoMore(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	task := f.send(t, "m1", "once")
	_, err := f.svc.ReplyToTask(ctx, task.ID(), relay.Reply{Text: "done", State: a2a.TaskStateCompleted})
	must(t, err)
	done, err := f.svc.GetTask(ctx, f.peer, task.ID())
	must(t, err)

	follow := &a2a.SendMessageRequest{Message: &a2a.Message{ID: "m2", TaskID: task.ID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("more")}}}
	if _, _, err := f.svc.SendMessage(ctx, f.agent, f.peer, follow, switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.EUNSUPPORTED {
		t.Errorf("a follow-up to a finished task: %v", err)
	}
	if _, err := f.svc.SetPushConfig(ctx, f.peer, a2a.PushConfig{TaskID: task.ID(), URL: "https://bob.example.com/hook"}, switchboard.ProtocolV1); switchboard.ErrorCode(err) != switchboard.EUNSUPPORTED {
		t.Errorf("a push configuration on a finished task: %v", err)
	}
	if _, err := f.svc.CancelTask(ctx, f.agent, f.peer, task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTCANCELABLE {
		t.Errorf("cancelling a finished task: %v", err)
	}
	if _, err := f.svc.ReplyToTask(ctx, task.ID(), relay.Reply{Text: "again", State: a2a.TaskStateCompleted}); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		t.Errorf("answering a finished task unforced: %v", err)
	}
	got, err := f.svc.GetTask(ctx, f.peer, task.ID())
	must(t, err)
	if got.Seq != done.Seq {
		t.Fatalf("the finished task changed: seq %d, was %d", got.Seq, done.Seq)
	}
	if _, err := f.svc.ReplyToTask(ctx, task.ID(), relay.Reply{Text: "forced", State: a2a.TaskStateCompleted, Force: true}); err != nil {
		t.Fatalf("a forced answer: %v", err)
	}
}

// countingConn is the DirectOffers of an instance whose connection takes
// every offer.
type countingConn struct {
	mu       sync.Mutex
	reserved int
}

func (c *countingConn) ReserveOffer(string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reserved++
	return "conn/1", true
}

func (c *countingConn) SendOffer(*switchboard.Offer) bool { return true }
func (c *countingConn) CancelOffer(string, string)        {}

// TestPausedAgentIsOfferedNothing: a task for a connector agent that does
// not accept tasks now is not offered to its connection as it is written;
// it waits in the queue.
func TestPausedAgentIsOfferedNothing(t *testing.T) {
	f := connectorFixture(t)
	ctx := context.Background()
	conn := &countingConn{}
	f.svc.OfferDirectly(conn)
	f.send(t, "m0", "while open")
	if conn.reserved != 1 {
		t.Fatalf("an accepting agent's connection reserved %d offers, want 1", conn.reserved)
	}
	g, err := f.db.UpdateAgent(ctx, f.agent.ID, switchboard.AgentUpdate{AcceptsTasks: new(false)})
	must(t, err)
	f.agent = g
	task := f.send(t, "m1", "while paused")
	ds, err := f.db.FindDeliveries(ctx, switchboard.DeliveryFilter{TaskID: &task.A2A.ID})
	must(t, err)
	if conn.reserved != 1 || len(ds) != 1 || ds[0].State != switchboard.DeliveryQueued {
		t.Fatalf("a paused agent's connection reserved %d offers; deliveries %+v", conn.reserved, ds)
	}
}

// TestListTasksIsThePeersOnAnAgent: a peer lists its own tasks on the
// agent it calls: not another peer's, and not those of a peer with the
// same id on another agent.
func TestListTasksIsThePeersOnAnAgent(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	mine := f.send(t, "m1", "mine")
	other := &switchboard.Agent{ID: switchboard.NewID(), AccountID: f.agent.AccountID, Handle: "other", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, f.db.CreateAgent(ctx, other))
	sameIDElsewhere := switchboard.Peer{AgentID: other.ID, ID: f.peer.ID, Label: "bob"}
	msg := &a2a.SendMessageRequest{Message: &a2a.Message{ID: "o1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}
	_, _, err := f.svc.SendMessage(ctx, other, sameIDElsewhere, msg, switchboard.ProtocolV1)
	must(t, err)
	eve := switchboard.Peer{AgentID: f.agent.ID, ID: "peer-eve", Label: "eve"}
	_, _, err = f.svc.SendMessage(ctx, f.agent, eve, &a2a.SendMessageRequest{Message: &a2a.Message{ID: "e1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}, switchboard.ProtocolV1)
	must(t, err)

	page, err := f.svc.ListTasks(ctx, f.peer, relay.TaskQuery{})
	must(t, err)
	if len(page.Tasks) != 1 || page.Tasks[0].ID() != mine.ID() || page.TotalSize != 1 {
		var ids []a2a.TaskID
		for _, got := range page.Tasks {
			ids = append(ids, got.ID())
		}
		t.Fatalf("listed %v (total %d), want only %s", ids, page.TotalSize, mine.ID())
	}
}

// TestValidatePushConfig: a push configuration's URL is an absolute
// http(s) URL without credentials.
func TestValidatePushConfig(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://hooks.example.com/x":       true,
		"http://hooks.example.com/x":        true,
		"ftp://hooks.example.com/x":         false,
		"file:///etc/passwd":                false,
		"/relative":                         false,
		"https://user:pw@hooks.example.com": false,
		"https://user@hooks.example.com/":   false,
	} {
		err := relay.ValidatePushConfig(&a2a.PushConfig{URL: url})
		if (err == nil) != ok {
			t.Errorf("ValidatePushConfig(%q) = %v, want ok %v", url, err, ok)
		}
	}
}

// TestListTasksOfAnAgentPeer: an agent that sent work lists its tasks on
// every agent when it asks without an agent, and only one agent's when it
// names one; never an outside peer's that happens to carry its id.
func TestListTasksOfAnAgentPeer(t *testing.T) {
	f := newFixture(t, membus.New())
	ctx := context.Background()
	other := &switchboard.Agent{ID: switchboard.NewID(), AccountID: f.agent.AccountID, Handle: "other", Mode: switchboard.ModeInbox, AcceptsTasks: true}
	must(t, f.db.CreateAgent(ctx, other))
	sender := switchboard.NewID()
	send := func(g *switchboard.Agent, p switchboard.Peer, id string) a2a.TaskID {
		task, _, err := f.svc.SendMessage(ctx, g, p, &a2a.SendMessageRequest{Message: &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}}, switchboard.ProtocolV1)
		must(t, err)
		return task.ID()
	}
	asAgent := func(agentID string) switchboard.Peer {
		return switchboard.Peer{AgentID: agentID, ID: sender, Label: "sender", Kind: switchboard.PeerAgent}
	}
	onF := send(f.agent, asAgent(f.agent.ID), "a1")
	onOther := send(other, asAgent(other.ID), "a2")
	send(f.agent, switchboard.Peer{AgentID: f.agent.ID, ID: sender, Label: "outside"}, "o1") // an outside peer with the same id

	list := func(p switchboard.Peer) []a2a.TaskID {
		page, err := f.svc.ListTasks(ctx, p, relay.TaskQuery{})
		must(t, err)
		var ids []a2a.TaskID
		for _, got := range page.Tasks {
			ids = append(ids, got.ID())
		}
		slices.Sort(ids)
		return ids
	}
	want := []a2a.TaskID{onF, onOther}
	slices.Sort(want)
	if got := list(asAgent("")); !slices.Equal(got, want) {
		t.Errorf("the agent's tasks everywhere: %v, want %v", got, want)
	}
	if got := list(asAgent(other.ID)); !slices.Equal(got, []a2a.TaskID{onOther}) {
		t.Errorf("the agent's tasks on other: %v, want %v", got, []a2a.TaskID{onOther})
	}
}
