package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/relay"
)

// Store is everything a complete store implements.
type Store = switchboard.Store

// Run runs the contract suite. open returns a new, empty store for each
// subtest and arranges for it to be closed.
func Run(t *testing.T, open func(t *testing.T) Store) {
	tests := map[string]func(*testing.T, Store){
		"AccountCreateFindUpdate":   testAccounts,
		"AgentCreateFindUpdate":     testAgents,
		"AgentDeleteCascades":       testAgentDelete,
		"TokenIssueRotateRevoke":    testTokens,
		"TaskCreateAndEvents":       testTaskCreate,
		"TaskDuplicateMessage":      testTaskDuplicateMessage,
		"TaskModifyAppendsInOrder":  testTaskModify,
		"TaskModifyManyEvents":      testTaskModifyManyEvents,
		"TaskModifyErrorWritesNone": testTaskModifyError,
		"TaskModifyTooLarge":        testTaskModifyTooLarge,
		"TaskModifyDiscardedChange": testTaskModifyDiscarded,
		"TaskModifyConcurrent":      testTaskModifyConcurrent,
		"TaskFindFiltersAndCursor":  testTaskFind,
		"PushConfigs":               testPushConfigs,
		"Sessions":                  testSessions,
		"ConnectSession":            testConnectSession,
		"TaskModifyAcknowledges":    testModifyTaskAck,
		"TaskFinishedWithAck":       testTaskFinishedWithAck,
	}
	for name, fn := range outboundTests {
		tests[name] = fn
	}
	for name, fn := range deliveryTests {
		tests[name] = fn
	}
	for name, fn := range expireTests {
		tests[name] = fn
	}
	for name, fn := range pushTests {
		tests[name] = fn
	}
	for name, fn := range usageTests {
		tests[name] = fn
	}
	for name, fn := range cursorTests {
		tests[name] = fn
	}
	for name, fn := range networkTests {
		tests[name] = fn
	}
	for name, fn := range signInTests {
		tests[name] = fn
	}
	for name, fn := range pairingTests {
		tests[name] = fn
	}
	for name, fn := range mcpTests {
		tests[name] = fn
	}
	for name, fn := range oauthTests {
		tests[name] = fn
	}
	for name, fn := range frontTests {
		tests[name] = fn
	}
	for name, fn := range outboundPeerTests {
		tests[name] = fn
	}
	for name, fn := range domainTests {
		tests[name] = fn
	}
	for name, fn := range certFileTests {
		tests[name] = fn
	}
	for name, fn := range auditTests {
		tests[name] = fn
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) { fn(t, open(t)) })
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code switchboard.Code) {
	t.Helper()
	if got := switchboard.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func newAccount(t *testing.T, s Store, name string) *switchboard.Account {
	t.Helper()
	a := &switchboard.Account{ID: switchboard.NewID(), Name: name, Role: switchboard.RoleOwner}
	must(t, s.CreateAccount(context.Background(), a))
	return a
}

func newAgent(t *testing.T, s Store, acct *switchboard.Account, handle string) *switchboard.Agent {
	t.Helper()
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Name: handle,
		Mode: switchboard.ModeInbox, Version: "1.0.0", AcceptsTasks: true,
		Skills: []a2a.AgentSkill{{ID: "s1", Name: "Skill", Description: "d", Tags: []string{"x"}}},
	}
	must(t, s.CreateAgent(context.Background(), g))
	return g
}

// newTask builds (without storing) a submitted task from one user message.
func newTask(agent *switchboard.Agent, peer, contextID, messageID string, at time.Time) *switchboard.Task {
	id := a2a.TaskID(switchboard.NewID())
	msg := &a2a.Message{ID: messageID, Role: a2a.MessageRoleUser, TaskID: id, ContextID: contextID,
		Parts: a2a.ContentParts{a2a.NewTextPart("hello " + messageID)}}
	at = at.UTC()
	return &switchboard.Task{
		A2A: a2a.Task{ID: id, ContextID: contextID, History: []*a2a.Message{msg},
			Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &at}},
		AgentID: agent.ID, PeerID: "id-" + peer, PeerLabel: peer, Protocol: switchboard.ProtocolV1,
		CreatedAt: at, UpdatedAt: at,
	}
}

// created is the change that goes with a new task: its first message's id,
// and an optional push configuration.
func created(task *switchboard.Task, push *switchboard.PushConfig) *switchboard.TaskChange {
	return &switchboard.TaskChange{MessageID: task.A2A.History[0].ID, PushConfig: push}
}

func testAccounts(t *testing.T, s Store) {
	ctx := context.Background()
	a := newAccount(t, s, "alice")
	wantCode(t, s.CreateAccount(ctx, &switchboard.Account{ID: switchboard.NewID(), Name: "alice", Role: switchboard.RoleOwner}), switchboard.ECONFLICT)

	got, err := s.FindAccountByID(ctx, a.ID)
	must(t, err)
	if got.Name != "alice" || got.Role != switchboard.RoleOwner || got.Disabled || got.CreatedAt.IsZero() {
		t.Fatalf("found %+v", got)
	}
	_, err = s.FindAccountByID(ctx, switchboard.NewID())
	wantCode(t, err, switchboard.ENOTFOUND)

	yes := true
	upd, err := s.UpdateAccount(ctx, a.ID, switchboard.AccountUpdate{Disabled: &yes})
	must(t, err)
	if !upd.Disabled {
		t.Fatal("account not disabled")
	}
	newAccount(t, s, "bob")
	all, err := s.FindAccounts(ctx)
	must(t, err)
	if len(all) != 2 || all[0].Name != "alice" || !all[0].Disabled {
		t.Fatalf("accounts = %+v", all)
	}
	_, err = s.UpdateAccount(ctx, switchboard.NewID(), switchboard.AccountUpdate{Disabled: &yes})
	wantCode(t, err, switchboard.ENOTFOUND)
}

func testAgents(t *testing.T, s Store) {
	ctx := context.Background()
	alice, bob := newAccount(t, s, "alice"), newAccount(t, s, "bob")
	g := newAgent(t, s, alice, "helper")
	newAgent(t, s, bob, "other")
	dup := &switchboard.Agent{ID: switchboard.NewID(), AccountID: bob.ID, Handle: "helper", Mode: switchboard.ModeInbox}
	wantCode(t, s.CreateAgent(ctx, dup), switchboard.ECONFLICT)

	byHandle, err := s.FindAgentByHandle(ctx, "helper")
	must(t, err)
	byID, err := s.FindAgentByID(ctx, g.ID)
	must(t, err)
	if byHandle.ID != g.ID || byID.Handle != "helper" || len(byID.Skills) != 1 || byID.Skills[0].ID != "s1" || !byID.AcceptsTasks {
		t.Fatalf("found %+v / %+v", byHandle, byID)
	}
	_, err = s.FindAgentByHandle(ctx, "nobody")
	wantCode(t, err, switchboard.ENOTFOUND)

	mine, err := s.FindAgents(ctx, switchboard.AgentFilter{AccountID: &alice.ID})
	must(t, err)
	all, err := s.FindAgents(ctx, switchboard.AgentFilter{})
	must(t, err)
	if len(mine) != 1 || len(all) != 2 {
		t.Fatalf("mine = %d, all = %d", len(mine), len(all))
	}

	name, no := "Helper Two", false
	upd, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Name: &name, AcceptsTasks: &no})
	must(t, err)
	if upd.Name != name || upd.AcceptsTasks || upd.Description != g.Description {
		t.Fatalf("updated %+v", upd)
	}

	yes := true
	_, err = s.UpdateAccount(ctx, alice.ID, switchboard.AccountUpdate{Disabled: &yes})
	must(t, err)
	got, err := s.FindAgentByID(ctx, g.ID)
	must(t, err)
	if !got.AccountDisabled {
		t.Fatal("agent of a disabled account does not say so")
	}
}

func testAgentDelete(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	g := newAgent(t, s, alice, "helper")
	_, hash := switchboard.NewToken(switchboard.TokenPeer)
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenPeer, AgentID: g.ID, Label: "p"}, false))
	task := newTask(g, "p", "ctx", "m1", time.Now())
	push := &switchboard.PushConfig{Config: a2a.PushConfig{TaskID: task.ID(), ID: "p1", URL: "https://example.com"}, CreatedAt: time.Now()}
	_, err := s.CreateTask(ctx, task, created(task, push))
	must(t, err)

	must(t, s.DeleteAgent(ctx, g.ID))
	_, err = s.FindTaskByMessageID(ctx, g.ID, task.PeerID, "m1")
	wantCode(t, err, switchboard.ENOTFOUND)
	pcs, err := s.FindPushConfigs(ctx, task.ID())
	must(t, err)
	if len(pcs) != 0 {
		t.Fatal("push configs survive the agent")
	}
	wantCode(t, s.DeleteAgent(ctx, g.ID), switchboard.ENOTFOUND)
	_, err = s.FindAgentByID(ctx, g.ID)
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = s.FindTokenByHash(ctx, hash)
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = s.FindTaskByID(ctx, task.ID())
	wantCode(t, err, switchboard.ENOTFOUND)
	evs, err := s.FindTaskEvents(ctx, task.ID(), 0, 0)
	must(t, err)
	if len(evs) != 0 {
		t.Fatalf("events survive the agent: %d", len(evs))
	}
}

func testTokens(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	g := newAgent(t, s, alice, "helper")
	peer := switchboard.TokenPeer

	_, h1 := switchboard.NewToken(peer)
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: h1, Kind: peer, AgentID: g.ID, Label: "bob"}, false))
	_, h2 := switchboard.NewToken(peer)
	wantCode(t, s.CreateToken(ctx, &switchboard.Token{Hash: h2, Kind: peer, AgentID: g.ID, Label: "bob"}, false), switchboard.ECONFLICT)

	got, err := s.FindTokenByHash(ctx, h1)
	must(t, err)
	if got.Kind != peer || got.AgentID != g.ID || got.Label != "bob" || got.RevokedAt != nil || got.PeerID == "" {
		t.Fatalf("token %+v", got)
	}
	bobsPeer := got.PeerID

	// Rotation: the new token works, the old one does not, and both stand
	// for the same peer.
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: h2, Kind: peer, AgentID: g.ID, Label: "bob"}, true))
	_, err = s.FindTokenByHash(ctx, h1)
	wantCode(t, err, switchboard.ENOTFOUND)
	rotated, err := s.FindTokenByHash(ctx, h2)
	must(t, err)
	if rotated.PeerID != bobsPeer {
		t.Fatalf("rotation changed the peer: %s -> %s", bobsPeer, rotated.PeerID)
	}

	label := "bob"
	n, err := s.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &peer, AgentID: &g.ID, Label: &label})
	must(t, err)
	if n != 1 {
		t.Fatalf("revoked %d, want 1", n)
	}
	_, err = s.FindTokenByHash(ctx, h2)
	wantCode(t, err, switchboard.ENOTFOUND)
	n, err = s.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &peer, AgentID: &g.ID, Label: &label})
	must(t, err)
	if n != 0 {
		t.Fatalf("revoked again %d, want 0", n)
	}

	// A revoked label can be issued again, to a new peer: it does not
	// inherit the old peer's tasks.
	_, h3 := switchboard.NewToken(peer)
	reissued := &switchboard.Token{Hash: h3, Kind: peer, AgentID: g.ID, Label: "bob"}
	must(t, s.CreateToken(ctx, reissued, false))
	if reissued.PeerID == "" || reissued.PeerID == bobsPeer {
		t.Fatalf("reissued label got peer %q (old %q)", reissued.PeerID, bobsPeer)
	}
	all, err := s.FindTokens(ctx, switchboard.TokenFilter{AgentID: &g.ID})
	must(t, err)
	active, err := s.FindTokens(ctx, switchboard.TokenFilter{AgentID: &g.ID, Active: true})
	must(t, err)
	if len(all) != 3 || len(active) != 1 || active[0].Hash != h3 {
		t.Fatalf("all = %d, active = %d", len(all), len(active))
	}

	// Owner tokens: one active per account.
	owner := switchboard.TokenOwner
	_, o1 := switchboard.NewToken(owner)
	_, o2 := switchboard.NewToken(owner)
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: o1, Kind: owner, AccountID: alice.ID}, false))
	wantCode(t, s.CreateToken(ctx, &switchboard.Token{Hash: o2, Kind: owner, AccountID: alice.ID}, false), switchboard.ECONFLICT)
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: o2, Kind: owner, AccountID: alice.ID}, true))
	_, err = s.FindTokenByHash(ctx, o1)
	wantCode(t, err, switchboard.ENOTFOUND)
	if tok, _ := s.FindTokenByHash(ctx, o2); tok.PeerID != "" {
		t.Fatalf("owner token has a peer id %q", tok.PeerID)
	}

	// The same secret again (an operator's preset token reused after a
	// rotation) reactivates the revoked row instead of failing.
	must(t, s.CreateToken(ctx, &switchboard.Token{Hash: o1, Kind: owner, AccountID: alice.ID}, true))
	_, err = s.FindTokenByHash(ctx, o1)
	must(t, err)
	_, err = s.FindTokenByHash(ctx, o2)
	wantCode(t, err, switchboard.ENOTFOUND)
	// ... but never for another account or kind, and never without replace.
	bob := newAccount(t, s, "bob")
	wantCode(t, s.CreateToken(ctx, &switchboard.Token{Hash: o2, Kind: owner, AccountID: bob.ID}, true), switchboard.ECONFLICT)
	wantCode(t, s.CreateToken(ctx, &switchboard.Token{Hash: o2, Kind: owner, AccountID: alice.ID}, false), switchboard.ECONFLICT)
	wantCode(t, s.CreateToken(ctx, &switchboard.Token{Hash: h3, Kind: owner, AccountID: alice.ID}, true), switchboard.ECONFLICT)
}

func testTaskCreate(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "ctx-1", "m1", time.Now())
	task.A2A.Metadata = map[string]any{"k": "v"}
	push := &switchboard.PushConfig{Config: a2a.PushConfig{TaskID: task.ID(), ID: "p1", URL: "https://example.com/hook"}, Protocol: switchboard.ProtocolV03, CreatedAt: time.Now()}
	ev, err := s.CreateTask(ctx, task, created(task, push))
	must(t, err)
	if ev.Seq != 1 || task.Seq != 1 {
		t.Fatalf("first event seq = %d, task seq = %d", ev.Seq, task.Seq)
	}
	if _, ok := ev.Event.(*a2a.Task); !ok {
		t.Fatalf("first event is %T, want the task snapshot", ev.Event)
	}

	got, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if got.AgentID != g.ID || got.PeerID != "id-bob" || got.PeerLabel != "bob" || got.Seq != 1 || got.State() != a2a.TaskStateSubmitted ||
		got.A2A.ContextID != "ctx-1" || len(got.A2A.History) != 1 || got.A2A.Metadata["k"] != "v" {
		t.Fatalf("found %+v", got)
	}
	if txt := switchboard.MessageText(got.A2A.History[0]); txt != "hello m1" {
		t.Fatalf("history text %q", txt)
	}
	evs, err := s.FindTaskEvents(ctx, task.ID(), 0, 0)
	must(t, err)
	if len(evs) != 1 || evs[0].Seq != 1 {
		t.Fatalf("events = %+v", evs)
	}
	snap, ok := evs[0].Event.(*a2a.Task)
	if !ok || snap.ID != task.ID() || snap.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("stored snapshot %+v", evs[0].Event)
	}
	byMsg, err := s.FindTaskByMessageID(ctx, g.ID, "id-bob", "m1")
	must(t, err)
	if byMsg.ID() != task.ID() {
		t.Fatal("message id does not find its task")
	}
	_, err = s.FindTaskByMessageID(ctx, g.ID, "id-carol", "m1")
	wantCode(t, err, switchboard.ENOTFOUND)
	pc, err := s.FindPushConfig(ctx, task.ID(), "p1")
	must(t, err)
	if pc.Protocol != switchboard.ProtocolV03 || pc.Config.URL != "https://example.com/hook" {
		t.Fatalf("push config %+v", pc)
	}
	_, err = s.FindTaskByID(ctx, a2a.TaskID(switchboard.NewID()))
	wantCode(t, err, switchboard.ENOTFOUND)

	// A task for an agent that does not exist is refused and nothing of
	// it kept, whether it has no delivery, or one queued or offered.
	gone := &switchboard.Agent{ID: switchboard.NewID()}
	orphan := newTask(gone, "bob", "c", "m9", time.Now())
	_, err = s.CreateTask(ctx, orphan, created(orphan, nil))
	wantCode(t, err, switchboard.ENOTFOUND)
	now := time.Now()
	queued := newTask(gone, "bob", "c", "m11", now)
	_, err = s.CreateTask(ctx, queued, withQueuedDelivery(queued, now))
	wantCode(t, err, switchboard.ENOTFOUND)
	offered := newTask(gone, "bob", "c", "m10", now)
	change := created(offered, nil)
	change.NewDeliveries = []*switchboard.Delivery{{ID: switchboard.NewID(), TaskID: offered.ID(), AgentID: gone.ID,
		Kind: switchboard.DeliverTask, MessageID: "m10", State: switchboard.DeliveryOffered, Holder: "conn-a", Attempts: 1,
		OfferedAt: &now, Deadline: now.Add(time.Hour), NextAttemptAt: now.Add(time.Minute), CreatedAt: now}}
	_, err = s.CreateTask(ctx, offered, change)
	wantCode(t, err, switchboard.ENOTFOUND)
	for _, id := range []a2a.TaskID{orphan.ID(), queued.ID(), offered.ID()} {
		_, err = s.FindTaskByID(ctx, id)
		wantCode(t, err, switchboard.ENOTFOUND)
		if evs, err := s.FindTaskEvents(ctx, id, 0, 0); err != nil || len(evs) != 0 {
			t.Fatalf("events of a refused task: %d (%v)", len(evs), err)
		}
	}
	if ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &gone.ID}); err != nil || len(ds) != 0 {
		t.Fatalf("deliveries of a refused task: %d (%v)", len(ds), err)
	}
}

func testTaskDuplicateMessage(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	first := newTask(g, "bob", "c", "m1", time.Now())
	_, err := s.CreateTask(ctx, first, created(first, nil))
	must(t, err)
	second := newTask(g, "bob", "c", "m1", time.Now())
	if _, err := s.CreateTask(ctx, second, created(second, nil)); !errors.Is(err, switchboard.ErrDuplicateMessage) {
		t.Fatalf("second create: %v, want ErrDuplicateMessage", err)
	}
	_, err = s.FindTaskByID(ctx, second.ID())
	wantCode(t, err, switchboard.ENOTFOUND) // nothing of the duplicate was kept
	// The same with a delivery: refused, and the delivery not kept.
	third := newTask(g, "bob", "c", "m1", time.Now())
	if _, err := s.CreateTask(ctx, third, withQueuedDelivery(third, time.Now())); !errors.Is(err, switchboard.ErrDuplicateMessage) {
		t.Fatalf("create with a delivery: %v, want ErrDuplicateMessage", err)
	}
	if ds, err := s.FindDeliveries(ctx, switchboard.DeliveryFilter{AgentID: &g.ID}); err != nil || len(ds) != 0 {
		t.Fatalf("deliveries of a duplicate: %d (%v)", len(ds), err)
	}
	if evs, err := s.FindTaskEvents(ctx, third.ID(), 0, 0); err != nil || len(evs) != 0 {
		t.Fatalf("events of a duplicate: %d (%v)", len(evs), err)
	}
	// Another peer may use the same message id.
	fourth := newTask(g, "carol", "c", "m1", time.Now())
	_, err = s.CreateTask(ctx, fourth, created(fourth, nil))
	must(t, err)
}

// testTaskModifyManyEvents: a change with more events than one statement
// inserts (sqlstore writes them in groups) stores them all, in order.
func testTaskModifyManyEvents(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)
	const n = 19
	_, evs, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		var events []a2a.Event
		for i := range n {
			art := &a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprint("a", i)), Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint("part ", i))}}
			tk.A2A.Artifacts = append(tk.A2A.Artifacts, art)
			events = append(events, &a2a.TaskArtifactUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Artifact: art})
		}
		return &switchboard.TaskChange{Events: events}, nil
	})
	must(t, err)
	if len(evs) != n || evs[0].Seq != 2 || evs[n-1].Seq != n+1 {
		t.Fatalf("%d events returned, seq %d to %d", len(evs), evs[0].Seq, evs[len(evs)-1].Seq)
	}
	stored, err := s.FindTaskEvents(ctx, task.ID(), 1, 0)
	must(t, err)
	if len(stored) != n {
		t.Fatalf("%d events stored, want %d", len(stored), n)
	}
	for i, ev := range stored {
		a, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent)
		if ev.Seq != int64(i+2) || !ok || string(a.Artifact.ID) != fmt.Sprint("a", i) || !ev.CreatedAt.Equal(evs[i].CreatedAt) {
			t.Fatalf("event %d stored as seq %d %+v", i, ev.Seq, ev.Event)
		}
	}
	if got, err := s.FindTaskByID(ctx, task.ID()); err != nil || got.Seq != n+1 {
		t.Fatalf("task seq %d (%v), want %d", got.Seq, err, n+1)
	}
}

func testTaskModify(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)

	got, evs, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		now := time.Now().UTC()
		tk.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &now}
		art := &a2a.Artifact{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart("done")}}
		tk.A2A.Artifacts = append(tk.A2A.Artifacts, art)
		return &switchboard.TaskChange{Events: []a2a.Event{
			&a2a.TaskArtifactUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Artifact: art},
			&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status},
		}, MessageID: "m2"}, nil
	})
	must(t, err)
	if got.Seq != 3 || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Seq != 3 {
		t.Fatalf("seq = %d, events = %+v", got.Seq, evs)
	}
	stored, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if stored.State() != a2a.TaskStateCompleted || len(stored.A2A.Artifacts) != 1 || stored.Seq != 3 {
		t.Fatalf("stored %+v", stored)
	}
	after1, err := s.FindTaskEvents(ctx, task.ID(), 1, 0)
	must(t, err)
	if len(after1) != 2 {
		t.Fatalf("events after 1: %d", len(after1))
	}
	if _, ok := after1[0].Event.(*a2a.TaskArtifactUpdateEvent); !ok {
		t.Fatalf("event 2 is %T", after1[0].Event)
	}
	if st, ok := after1[1].Event.(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("event 3 is %+v", after1[1].Event)
	}
	limited, err := s.FindTaskEvents(ctx, task.ID(), 0, 2)
	must(t, err)
	if len(limited) != 2 || limited[1].Seq != 2 {
		t.Fatalf("limited = %d", len(limited))
	}
	if _, err := s.FindTaskByMessageID(ctx, g.ID, "id-bob", "m2"); err != nil {
		t.Fatalf("follow-up message id not recorded: %v", err)
	}

	// A duplicate message id in a change rolls the whole change back.
	_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status.State = a2a.TaskStateWorking
		return &switchboard.TaskChange{Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), Status: tk.A2A.Status}}, MessageID: "m2"}, nil
	})
	if !errors.Is(err, switchboard.ErrDuplicateMessage) {
		t.Fatalf("duplicate in change: %v", err)
	}
	stored, err = s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if stored.State() != a2a.TaskStateCompleted || stored.Seq != 3 {
		t.Fatalf("rolled-back change left %s seq %d", stored.State(), stored.Seq)
	}

	// A nil change writes nothing.
	_, evs, err = s.ModifyTask(ctx, task.ID(), func(*switchboard.Task) (*switchboard.TaskChange, error) { return nil, nil })
	must(t, err)
	if len(evs) != 0 {
		t.Fatal("nil change wrote events")
	}
	_, _, err = s.ModifyTask(ctx, a2a.TaskID(switchboard.NewID()), func(*switchboard.Task) (*switchboard.TaskChange, error) { return nil, nil })
	wantCode(t, err, switchboard.ENOTFOUND)
}

func testTaskModifyError(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)
	boom := errors.New("boom")
	_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status.State = a2a.TaskStateFailed
		return nil, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	stored, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if stored.State() != a2a.TaskStateSubmitted {
		t.Fatal("a failed change was written")
	}
}

// testTaskModifyTooLarge checks that a change that would make the task
// larger than MaxTaskBytes is refused with a TaskTooLargeError and writes
// nothing of itself (not its events, not its acknowledgement).
func testTaskModifyTooLarge(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task, d := queueTask(t, s, g, "m1", time.Now())
	_, err := s.ClaimDeliveries(ctx, g.ID, "conn-1", 10, time.Minute)
	must(t, err)
	big := strings.Repeat("x", switchboard.MaxTaskBytes)
	_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(big))}
		ev := &a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status}
		return &switchboard.TaskChange{Events: []a2a.Event{ev}, Ack: &switchboard.DeliveryAck{DeliveryID: d.ID, Holder: "conn-1"},
			MaxBytes: switchboard.MaxTaskBytes}, nil
	})
	var tooLarge *switchboard.TaskTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Bytes <= switchboard.MaxTaskBytes || switchboard.ErrorCode(err) != switchboard.ETOOLARGE {
		t.Fatalf("err = %v, want a TaskTooLargeError", err)
	}
	stored, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	events, err := s.FindTaskEvents(ctx, task.ID(), 0, 0)
	must(t, err)
	if stored.State() != a2a.TaskStateSubmitted || stored.Seq != 1 || len(events) != 1 {
		t.Fatalf("after the refusal: state %s, seq %d, %d events", stored.State(), stored.Seq, len(events))
	}
	first, err := s.AckDelivery(ctx, d.ID, "conn-1")
	must(t, err)
	if !first {
		t.Fatal("the refused change's acknowledgement was written")
	}
	// A change without a bound (the relay's own: failing, expiring) is
	// written whatever the task's size, so a task near the bound can end.
	_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(big))}
		ev := &a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: tk.A2A.ContextID, Status: tk.A2A.Status}
		return &switchboard.TaskChange{Events: []a2a.Event{ev}}, nil
	})
	must(t, err)
}

// testTaskModifyDiscarded checks that what fn did to the task it was
// handed is forgotten when it writes nothing (an error, or no change): the
// next change starts from the task as stored.
func testTaskModifyDiscarded(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	task.A2A.Metadata = map[string]any{"kept": "yes"}
	task.A2A.Artifacts = []*a2a.Artifact{{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart("first")}}}
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)
	spoil := func(tk *switchboard.Task) {
		tk.A2A.History = append(tk.A2A.History, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("spoiled")))
		tk.A2A.Artifacts[0] = &a2a.Artifact{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart("spoiled")}}
		tk.A2A.Metadata["spoiled"] = true
		tk.A2A.Status.State = a2a.TaskStateFailed
	}
	boom := errors.New("boom")
	for _, result := range []error{boom, nil} {
		_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
			spoil(tk)
			return nil, result
		})
		if !errors.Is(err, result) {
			t.Fatalf("err = %v, want %v", err, result)
		}
	}
	var seen *switchboard.Task
	_, _, err = s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		c := *tk
		seen = &c
		return nil, nil
	})
	must(t, err)
	stored, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	for name, got := range map[string]*switchboard.Task{"ModifyTask": seen, "FindTaskByID": stored} {
		if len(got.A2A.History) != 1 || got.State() != a2a.TaskStateSubmitted || len(got.A2A.Metadata) != 1 ||
			a2a.Text(got.A2A.Artifacts[0].Parts[0].Content.(a2a.Text)) != "first" {
			t.Fatalf("%s sees a change that was not written: %d messages, %s, metadata %v, artifact %v",
				name, len(got.A2A.History), got.State(), got.A2A.Metadata, got.A2A.Artifacts[0].Parts[0].Content)
		}
	}
}

// testTaskModifyConcurrent checks that changes to one task never interleave:
// every change sees the one before it and sequence numbers have no gaps.
func testTaskModifyConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, _, err := s.ModifyTask(ctx, task.ID(), func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
					n, _ := tk.A2A.Metadata["n"].(float64)
					tk.A2A.SetMeta("n", n+1)
					return &switchboard.TaskChange{Events: []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: tk.ID(), ContextID: "c", Status: tk.A2A.Status}}}, nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	stored, err := s.FindTaskByID(ctx, task.ID())
	must(t, err)
	if n, _ := stored.A2A.Metadata["n"].(float64); n != workers*each || stored.Seq != workers*each+1 {
		t.Fatalf("n = %v, seq = %d; want %d and %d", stored.A2A.Metadata["n"], stored.Seq, workers*each, workers*each+1)
	}
	evs, err := s.FindTaskEvents(ctx, task.ID(), 0, 0)
	must(t, err)
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
}

func testTaskFind(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var ids []a2a.TaskID
	for i := range 5 {
		peer := "bob"
		if i == 4 {
			peer = "carol"
		}
		ctxID := "c1"
		if i%2 == 1 {
			ctxID = "c2"
		}
		task := newTask(g, peer, ctxID, "m"+string(rune('a'+i)), base.Add(time.Duration(i)*time.Second))
		_, err := s.CreateTask(ctx, task, created(task, nil))
		must(t, err)
		ids = append(ids, task.ID())
	}
	bob := "id-bob"
	all, total, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, PeerID: &bob})
	must(t, err)
	if total != 4 || len(all) != 4 || all[0].ID() != ids[3] || all[3].ID() != ids[0] {
		t.Fatalf("newest first: total %d, got %d", total, len(all))
	}

	// Pages of two, continued by cursor.
	page1, total, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, PeerID: &bob, Limit: 2})
	must(t, err)
	if total != 4 || len(page1) != 2 {
		t.Fatalf("page 1: %d of %d", len(page1), total)
	}
	last := page1[1]
	page2, _, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, PeerID: &bob, Limit: 2,
		After: &switchboard.TaskCursor{StatusAt: switchboard.StatusAt(last), ID: last.ID()}})
	must(t, err)
	if len(page2) != 2 || page2[0].ID() != ids[1] || page2[1].ID() != ids[0] {
		t.Fatalf("page 2 wrong")
	}

	c2 := "c2"
	byCtx, total, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, PeerID: &bob, ContextID: &c2})
	must(t, err)
	if total != 2 || len(byCtx) != 2 {
		t.Fatalf("by context: %d", total)
	}
	after := base.Add(2 * time.Second)
	recent, _, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, StatusAfter: &after})
	must(t, err)
	if len(recent) != 2 {
		t.Fatalf("status after: %d, want 2", len(recent))
	}
	oldest, uncounted, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, OldestFirst: true, Limit: 1, NoTotal: true})
	must(t, err)
	if len(oldest) != 1 || oldest[0].ID() != ids[0] {
		t.Fatal("oldest first wrong")
	}
	if uncounted != 0 {
		t.Fatalf("NoTotal: total %d, want 0 (not counted)", uncounted)
	}
	_, _, err = s.ModifyTask(ctx, ids[0], func(tk *switchboard.Task) (*switchboard.TaskChange, error) {
		tk.A2A.Status.State = a2a.TaskStateCompleted
		return &switchboard.TaskChange{}, nil
	})
	must(t, err)
	open, total, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, States: relay.InboxStates})
	must(t, err)
	if total != 4 || len(open) != 4 {
		t.Fatalf("open tasks: %d", total)
	}
	done, _, err := s.FindTasks(ctx, switchboard.TaskFilter{AgentID: &g.ID, States: []a2a.TaskState{a2a.TaskStateCompleted}})
	must(t, err)
	if len(done) != 1 || done[0].ID() != ids[0] {
		t.Fatal("state filter wrong")
	}
}

func testPushConfigs(t *testing.T, s Store) {
	ctx := context.Background()
	g := newAgent(t, s, newAccount(t, s, "alice"), "helper")
	task := newTask(g, "bob", "c", "m1", time.Now())
	_, err := s.CreateTask(ctx, task, created(task, nil))
	must(t, err)
	save := func(id, url string) error {
		return s.SavePushConfig(ctx, &switchboard.PushConfig{
			Config:   a2a.PushConfig{TaskID: task.ID(), ID: id, URL: url, Token: "tok"},
			Protocol: switchboard.ProtocolV1, CreatedAt: time.Now(),
		})
	}
	must(t, save("a", "https://example.com/1"))
	must(t, save("b", "https://example.com/2"))
	must(t, save("a", "https://example.com/3")) // replaces
	all, err := s.FindPushConfigs(ctx, task.ID())
	must(t, err)
	if len(all) != 2 || all[0].Config.URL != "https://example.com/3" || all[0].Config.Token != "tok" {
		t.Fatalf("configs %+v", all)
	}
	for i := range switchboard.MaxPushConfigsPerTask - 2 {
		must(t, save("x"+string(rune('a'+i)), "https://example.com/x"))
	}
	wantCode(t, save("one-too-many", "https://example.com/y"), switchboard.EINVALID)
	must(t, save("a", "https://example.com/4")) // replacing stays allowed at the limit

	must(t, s.DeletePushConfig(ctx, task.ID(), "b"))
	must(t, s.DeletePushConfig(ctx, task.ID(), "b"))
	_, err = s.FindPushConfig(ctx, task.ID(), "b")
	wantCode(t, err, switchboard.ENOTFOUND)
}

// SeedAccount stores an owner account with the given name.
func SeedAccount(ctx context.Context, s switchboard.AccountStore, name string) error {
	return s.CreateAccount(ctx, &switchboard.Account{ID: switchboard.NewID(), Name: name, Role: switchboard.RoleOwner})
}
