package network_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/relay"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// world is a network over a real store and task service, with a clock the
// test moves (the store stamps sessions with it too).
type world struct {
	t        testing.TB
	db       *sqlstore.DB
	relay    *relay.Service
	net      *network.Service
	operator *switchboard.Account
	owner    *switchboard.Account

	mu  sync.Mutex
	now time.Time
}

func newWorld(t testing.TB) *world {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, sqlitetest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	bus := membus.New()
	t.Cleanup(func() { _ = bus.Close(); _ = db.Close() })
	w := &world{t: t, db: db, now: time.Now().UTC()}
	db.Now = w.clock
	w.relay = relay.New(db, bus, slog.New(slog.NewTextHandler(io.Discard, nil)))
	w.relay.Now = w.clock
	w.net = network.New(db, w.relay)
	w.net.Now = w.clock
	w.net.HeartbeatInterval = 10 * time.Second
	w.net.ReconnectGrace = 5 * time.Second
	w.operator = &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
	w.owner = &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, w.operator))
	must(t, db.CreateAccount(ctx, w.owner))
	return w
}

func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// agent stores an approved connector agent of the owner, accepting tasks,
// offering skill, in the communities.
func (w *world) agent(handle, skill string, communities ...string) *switchboard.Agent {
	w.t.Helper()
	return w.agentOf(w.owner, handle, skill, communities...)
}

// agentOf is agent, of the account.
func (w *world) agentOf(acct *switchboard.Account, handle, skill string, communities ...string) *switchboard.Agent {
	w.t.Helper()
	ctx := context.Background()
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Name: handle,
		Mode: switchboard.ModeConnector, AcceptsTasks: true, Approved: true}
	if skill != "" {
		g.Skills = []a2a.AgentSkill{{ID: skill, Name: skill, Tags: []string{}}}
	}
	must(w.t, w.db.CreateAgent(ctx, g))
	for _, c := range communities {
		_, err := w.net.Join(ctx, w.operator, g, c)
		must(w.t, err)
	}
	return g
}

// connect opens a session of the agent, renewed now; it returns its holder.
func (w *world) connect(g *switchboard.Agent) string {
	w.t.Helper()
	holder := "conn/" + g.Handle + "/" + switchboard.NewID()
	now := w.clock()
	_, err := w.db.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: g.ID, Holder: holder, InstanceID: "i",
		ConnectedAt: now, ExpiresAt: now.Add(time.Hour)})
	must(w.t, err)
	return holder
}

func (w *world) update(g *switchboard.Agent, upd switchboard.AgentUpdate) {
	w.t.Helper()
	_, err := w.db.UpdateAgent(context.Background(), g.ID, upd)
	must(w.t, err)
}

// choose runs discovery for the sender.
func (w *world) choose(sender *switchboard.Agent, community, skill string) (*switchboard.Agent, error) {
	return w.net.Choose(context.Background(), sender, network.Target{Community: community, Skill: skill})
}

func wantNoAgent(t *testing.T, err error, phrase string) {
	t.Helper()
	if switchboard.ErrorCode(err) != switchboard.ENOAGENT {
		t.Fatalf("error %v, want no_agent_found", err)
	}
	if !strings.Contains(switchboard.ErrorMessage(err), phrase) {
		t.Fatalf("reason %q does not say %q", switchboard.ErrorMessage(err), phrase)
	}
}

func TestApproval(t *testing.T) {
	w := newWorld(t)
	w.net.RequireApproval = true
	if w.net.ApprovedAtCreation(w.owner) {
		t.Fatal("an owner's new agent is approved while approval is required")
	}
	if !w.net.ApprovedAtCreation(w.operator) {
		t.Fatal("the operator's new agent is not approved")
	}
	w.net.RequireApproval = false
	if !w.net.ApprovedAtCreation(w.owner) {
		t.Fatal("an owner's new agent is not approved while approval is not required")
	}
	g := w.agent("newcomer", "")
	w.update(g, switchboard.AgentUpdate{Approved: new(false)})
	if _, err := w.net.Approve(context.Background(), w.owner, g, true); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an owner approved: %v", err)
	}
	got, err := w.net.Approve(context.Background(), w.operator, g, true)
	must(t, err)
	if !got.Approved {
		t.Fatal("the operator's approval did not take")
	}
}

// TestUnapprovedNeverChosen: an unapproved agent is never a candidate,
// even the only live one, and cannot use discovery itself.
func TestUnapprovedNeverChosen(t *testing.T) {
	w := newWorld(t)
	sender := w.agent("sender", "", "lab")
	pending := w.agent("pending", "code", "lab")
	w.update(pending, switchboard.AgentUpdate{Approved: new(false)})
	w.connect(pending)
	for range 5 {
		_, err := w.choose(sender, "lab", "code")
		wantNoAgent(t, err, "none approved")
	}
	approved := w.agent("approved", "code", "lab") // not connected: in no grace either
	_, err := w.choose(sender, "lab", "code")
	wantNoAgent(t, err, "none live")
	w.connect(approved)
	for range 5 {
		g, err := w.choose(sender, "lab", "code")
		must(t, err)
		if g.ID != approved.ID {
			t.Fatalf("chose %s", g.Handle)
		}
	}
	// By name, neither.
	if _, err := w.net.Choose(context.Background(), sender, network.Target{To: "pending"}); switchboard.ErrorCode(err) != switchboard.ENOAGENT {
		t.Fatalf("by name to an unapproved agent: %v", err)
	}
	// An unapproved sender is refused.
	pending, err = w.db.FindAgentByID(context.Background(), pending.ID)
	must(t, err)
	if _, err := w.choose(pending, "lab", ""); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an unapproved sender: %v", err)
	}
}

// TestPausedSkippedThoughLive: an agent that does not accept tasks is not
// chosen by discovery, connected as it is.
func TestPausedSkippedThoughLive(t *testing.T) {
	w := newWorld(t)
	sender := w.agent("sender", "", "lab")
	paused := w.agent("paused", "code", "lab")
	w.connect(paused)
	w.update(paused, switchboard.AgentUpdate{AcceptsTasks: new(false)})
	_, err := w.choose(sender, "lab", "code")
	wantNoAgent(t, err, "none accepting")
	busy := w.agent("busy", "code", "lab")
	w.connect(busy)
	for range 3 {
		g, err := w.choose(sender, "lab", "code")
		must(t, err)
		if g.ID != busy.ID {
			t.Fatalf("chose %s, which is paused", g.Handle)
		}
	}
	// By name it is chosen: the work waits for it (TestPausedByName).
	g, err := w.net.Choose(context.Background(), sender, network.Target{To: "paused"})
	if err != nil || g.ID != paused.ID {
		t.Fatalf("by name: %v %v", g, err)
	}
}

// TestPolicy: the fewest unfinished tasks first, equals in turn.
func TestPolicy(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	var workers []*switchboard.Agent
	for i := range 3 {
		g := w.agent(fmt.Sprintf("worker-%d", i), "work", "lab")
		w.connect(g)
		workers = append(workers, g)
	}
	seen := make(map[string]int)
	for range 9 {
		g, err := w.choose(sender, "lab", "work")
		must(t, err)
		seen[g.Handle]++
	}
	for _, g := range workers {
		if seen[g.Handle] != 3 {
			t.Fatalf("turns %v: not round robin", seen)
		}
	}
	// Sending gives the chosen one a task: the next go elsewhere until
	// all have one.
	got := make(map[string]bool)
	for i := range 3 {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprint("job ", i)))
		_, target, err := w.net.Send(ctx, sender, network.Request{Target: network.Target{Community: "lab", Skill: "work"},
			Message: &a2a.SendMessageRequest{Message: msg}}, nil)
		must(t, err)
		if got[target.Handle] {
			t.Fatalf("%s got a second task while another had none", target.Handle)
		}
		got[target.Handle] = true
	}
}

// TestGrace: a connector agent whose socket dropped (or whose session
// stopped being renewed) is chosen for the grace when no live one is; live
// ones go first; after the grace, no one.
func TestGrace(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	flaky := w.agent("flaky", "x", "lab")
	holder := w.connect(flaky)
	must(t, w.db.CloseSessions(ctx, []string{holder}))
	w.advance(4 * time.Second)
	g, err := w.choose(sender, "lab", "x")
	must(t, err)
	if g.ID != flaky.ID {
		t.Fatalf("chose %s", g.Handle)
	}
	steady := w.agent("steady", "x", "lab")
	w.connect(steady)
	for range 3 {
		if g, err := w.choose(sender, "lab", "x"); err != nil || g.ID != steady.ID {
			t.Fatalf("with a live agent: %v %v", g, err)
		}
	}
	must(t, w.db.CloseSessions(ctx, nil))
	// steady's instance dies: no renewal. It is live for the heartbeat
	// interval (plus its quarter), then in its grace; flaky's grace ends.
	w.advance(2 * time.Second) // flaky dropped 6 s ago: past its grace
	if g, err := w.choose(sender, "lab", "x"); err != nil || g.ID != steady.ID {
		t.Fatalf("steady, still live: %v %v", g, err)
	}
	w.advance(11 * time.Second) // steady renewed 13 s ago: past 12.5 s, in its grace
	if g, err := w.choose(sender, "lab", "x"); err != nil || g.ID != steady.ID {
		t.Fatalf("steady, in its grace: %v %v", g, err)
	}
	w.advance(5 * time.Second) // 18 s: past 12.5 + 5
	_, err = w.choose(sender, "lab", "x")
	wantNoAgent(t, err, "none live")
	// No grace at all: a dropped agent is gone at once.
	w.net.ReconnectGrace = 0
	h := w.connect(flaky)
	must(t, w.db.CloseSessions(ctx, []string{h}))
	_, err = w.choose(sender, "lab", "x")
	wantNoAgent(t, err, "none live")
}

// TestByName: a named receiver must share a community with the sender
// (the named one, when given), accept tasks and offer the skill; one the
// sender may not reach reads as one that does not exist. A URL is no
// handle: whatever its path holds, it names nobody (the faces read this
// deployment's addresses into handles before they ask).
func TestByName(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab", "ops")
	mate := w.agent("mate", "code", "lab")
	stranger := w.agent("stranger", "code", "elsewhere")
	for _, to := range []string{"mate", "MATE", " mate "} {
		g, err := w.net.Choose(ctx, sender, network.Target{To: to})
		must(t, err)
		if g.ID != mate.ID {
			t.Fatalf("%q: chose %s", to, g.Handle)
		}
	}
	for _, to := range []string{"http://example.test/a/mate/", "https://x.example/a/mate"} {
		g, err := w.net.Choose(ctx, sender, network.Target{To: to})
		if switchboard.ErrorCode(err) != switchboard.ENOAGENT {
			t.Fatalf("%q: chose %v, %v; want no agent", to, g, err)
		}
	}
	_, err := w.net.Choose(ctx, sender, network.Target{To: "stranger"})
	wantNoAgent(t, err, `no agent "stranger" shares a community`)
	_, missing := w.net.Choose(ctx, sender, network.Target{To: "nobody"})
	if switchboard.ErrorMessage(err) != strings.Replace(switchboard.ErrorMessage(missing), "nobody", "stranger", 1) {
		t.Fatalf("a stranger %q and a missing agent %q read differently", err, missing)
	}
	_, err = w.net.Choose(ctx, sender, network.Target{To: "sender"})
	wantNoAgent(t, err, "shares a community")
	_, err = w.net.Choose(ctx, sender, network.Target{To: "mate", Community: "ops"})
	wantNoAgent(t, err, "shares a community")
	_, err = w.net.Choose(ctx, sender, network.Target{To: "mate", Skill: "poetry"})
	wantNoAgent(t, err, "does not offer the skill")
	_, err = w.net.Choose(ctx, sender, network.Target{To: "mate", Community: "elsewhere"})
	if switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("naming a community the sender is not in: %v", err)
	}
	_ = stranger
}

// TestReasons: each gate that empties the list is named.
func TestReasons(t *testing.T) {
	w := newWorld(t)
	sender := w.agent("sender", "", "lab")
	_, err := w.choose(sender, "lab", "")
	wantNoAgent(t, err, "no member")
	_, err = w.choose(sender, "", "")
	wantNoAgent(t, err, "a community you are in")
	g := w.agent("member", "code", "lab")
	w.update(g, switchboard.AgentUpdate{Approved: new(false)})
	_, err = w.choose(sender, "lab", "")
	wantNoAgent(t, err, "none approved")
	w.update(g, switchboard.AgentUpdate{Approved: new(true), AcceptsTasks: new(false)})
	_, err = w.choose(sender, "lab", "")
	wantNoAgent(t, err, "none accepting")
	w.update(g, switchboard.AgentUpdate{AcceptsTasks: new(true)})
	_, err = w.choose(sender, "lab", "poetry")
	wantNoAgent(t, err, `no skill: none of the 1 members of community "lab" that accept tasks offers the skill "poetry"`)
	_, err = w.choose(sender, "lab", "code")
	wantNoAgent(t, err, "none live")
	inbox := switchboard.ModeInbox
	w.connect(g)
	w.update(g, switchboard.AgentUpdate{Mode: &inbox}) // an inbox agent is never reachable now
	_, err = w.choose(sender, "lab", "code")
	wantNoAgent(t, err, "none live")
}

// TestRetryGoesWhereTheFirstWent: the same message sent again reaches the
// agent it reached, so the task service answers with its task.
func TestRetryGoesWhereTheFirstWent(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	for i := range 3 {
		w.connect(w.agent(fmt.Sprintf("w%d", i), "x", "lab"))
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("once"))
	req := network.Request{Target: network.Target{Community: "lab"}, Message: &a2a.SendMessageRequest{Message: msg}}
	first, firstTarget, err := w.net.Send(ctx, sender, req, nil)
	must(t, err)
	for range 3 {
		again, target, err := w.net.Send(ctx, sender, req, nil)
		must(t, err)
		if again.ID() != first.ID() || target.ID != firstTarget.ID {
			t.Fatalf("a retry went to %s (task %s), the first to %s (task %s)", target.Handle, again.ID(), firstTarget.Handle, first.ID())
		}
	}
}

// TestFollowUp: a message with a taskId goes to its task's agent, for the
// agent that sent the task only.
func TestFollowUp(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	other := w.agent("other", "", "lab")
	worker := w.agent("worker", "x", "lab")
	w.connect(worker)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("start"))
	task, _, err := w.net.Send(ctx, sender, network.Request{Target: network.Target{To: "worker"}, Message: &a2a.SendMessageRequest{Message: msg}}, nil)
	must(t, err)
	if task.PeerKind != switchboard.PeerAgent || task.PeerID != sender.ID || task.PeerLabel != "sender" {
		t.Fatalf("the task's peer: %q %q %q", task.PeerKind, task.PeerID, task.PeerLabel)
	}
	g, err := w.net.TaskAgent(ctx, network.AgentPeer(sender), task.ID())
	must(t, err)
	if g.ID != worker.ID {
		t.Fatalf("the task's agent: %s", g.Handle)
	}
	if _, err := w.net.TaskAgent(ctx, network.AgentPeer(other), task.ID()); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("another agent finds the task: %v", err)
	}
	next := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("more"))
	next.TaskID = task.ID()
	if _, _, err := w.net.Send(ctx, other, network.Request{Message: &a2a.SendMessageRequest{Message: next}}, nil); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("another agent continues the task: %v", err)
	}
}

// TestMembership: names are DNS labels; a closed community takes members
// from the operator only; only the operator configures.
func TestMembership(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	g := w.agent("a1", "")
	for _, bad := range []string{"", "Has Space", "-x", strings.Repeat("a", 64), "0196f0c2-5a43-7b3e-8f00-0123456789ab"} {
		if _, err := w.net.Join(ctx, w.owner, g, bad); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Fatalf("join %q: %v", bad, err)
		}
	}
	if joined, err := w.net.Join(ctx, w.owner, g, "Lab"); err != nil || !joined {
		t.Fatalf("join Lab: %v %v", joined, err)
	}
	if _, err := w.net.Configure(ctx, w.owner, &switchboard.Community{Name: "staff", Closed: true}); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an owner configured: %v", err)
	}
	created, err := w.net.Configure(ctx, w.operator, &switchboard.Community{Name: "staff", Closed: true})
	if err != nil || !created {
		t.Fatalf("configure: %v %v", created, err)
	}
	if _, err := w.net.Join(ctx, w.owner, g, "staff"); switchboard.ErrorCode(err) != switchboard.EFORBIDDEN {
		t.Fatalf("an owner joined a closed community: %v", err)
	}
	if _, err := w.net.Join(ctx, w.operator, g, "staff"); err != nil {
		t.Fatal(err)
	}
	must(t, w.net.Leave(ctx, g, "staff")) // an owner may always leave
	mine, err := w.net.Communities(ctx, w.owner)
	must(t, err)
	if len(mine) != 1 || mine[0].Name != "lab" {
		t.Fatalf("the owner's communities: %+v", mine)
	}
	all, err := w.net.Communities(ctx, w.operator)
	must(t, err)
	if len(all) != 2 {
		t.Fatalf("every community: %+v", all)
	}
	if ok, _ := w.net.ManagesCommunity(ctx, w.owner, "lab"); !ok {
		t.Fatal("the owner of a member does not manage lab")
	}
	if ok, _ := w.net.ManagesCommunity(ctx, w.owner, "staff"); ok {
		t.Fatal("the owner manages staff, where it has no agent")
	}
}

// TestDirectory: an agent sees the other members of its communities, an
// owner those of its agents' communities, the operator everyone; each
// entry is live only while its session is renewed.
func TestDirectory(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	me := w.agent("me", "", "lab")
	mate := w.agent("mate", "code", "lab", "secret")
	w.agent("far", "code", "elsewhere")
	w.connect(mate)
	ms, err := w.net.Directory(ctx, network.Viewer{Agent: me}, network.DirectoryQuery{})
	must(t, err)
	if len(ms) != 1 || ms[0].Agent.ID != mate.ID || ms[0].Reach != switchboard.ReachLive || len(ms[0].Communities) != 1 {
		t.Fatalf("me's directory: %+v", ms)
	}
	w.advance(13 * time.Second) // past the heartbeat interval and its quarter
	ms, err = w.net.Directory(ctx, network.Viewer{Agent: me}, network.DirectoryQuery{})
	must(t, err)
	if ms[0].Reach == switchboard.ReachLive {
		t.Fatal("an agent not renewed for more than a heartbeat interval is live")
	}
	if ms, _ := w.net.Directory(ctx, network.Viewer{Agent: me}, network.DirectoryQuery{OnlyLive: true}); len(ms) != 0 {
		t.Fatalf("live only: %+v", ms)
	}
	if _, err := w.net.Directory(ctx, network.Viewer{Agent: me}, network.DirectoryQuery{Community: "elsewhere"}); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a community me is not in: %v", err)
	}
	op, err := w.net.Directory(ctx, network.Viewer{Account: w.operator}, network.DirectoryQuery{})
	must(t, err)
	if len(op) != 3 {
		t.Fatalf("the operator's directory: %d", len(op))
	}
	skilled, err := w.net.Directory(ctx, network.Viewer{Account: w.operator}, network.DirectoryQuery{Skill: "code", Limit: 1})
	must(t, err)
	if len(skilled) != 1 || skilled[0].Agent.Handle != "far" {
		t.Fatalf("the first with code: %+v", skilled)
	}
}

// TestCommunitySkills: a community's card offers the skills of its members
// that could be chosen now.
func TestCommunitySkills(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.connect(w.agent("a", "code", "lab"))
	w.connect(w.agent("b", "prose", "lab"))
	w.agent("c", "poetry", "lab") // not connected
	paused := w.agent("d", "secrets", "lab")
	w.connect(paused)
	w.update(paused, switchboard.AgentUpdate{AcceptsTasks: new(false)})
	skills, err := w.net.CommunitySkills(ctx, "lab")
	must(t, err)
	var ids []string
	for _, s := range skills {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "code,prose" {
		t.Fatalf("skills %v", ids)
	}
}

func TestLiveness(t *testing.T) {
	n := network.New(nil, nil)
	n.HeartbeatInterval, n.ReconnectGrace = 20*time.Second, 5*time.Second
	now := time.Unix(1000, 0)
	l := n.Liveness(now)
	if got, want := now.Sub(l.LiveSince), 22*time.Second; got != want { // 20 s + min(5 s, 2 s)
		t.Fatalf("live window %s, want %s", got, want)
	}
	if got, want := now.Sub(l.GraceSince), 27*time.Second; got != want {
		t.Fatalf("grace of a stale session %s, want %s", got, want)
	}
	if got, want := now.Sub(l.EndedSince), 5*time.Second; got != want {
		t.Fatalf("grace of an ended session %s, want %s", got, want)
	}
}

// TestByNameDisabledAccount: an agent of a disabled account is not sent
// work by name, though it shares a community with the sender: it reads
// exactly as an agent that does not exist, and no task is made for it.
func TestByNameDisabledAccount(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sender := w.agent("sender", "", "lab")
	other := &switchboard.Account{ID: switchboard.NewID(), Name: "other", Role: switchboard.RoleOwner}
	must(t, w.db.CreateAccount(ctx, other))
	off := w.agentOf(other, "off", "code", "lab")
	w.connect(off)
	_, err := w.db.UpdateAccount(ctx, other.ID, switchboard.AccountUpdate{Disabled: new(true)})
	must(t, err)

	_, err = w.net.Choose(ctx, sender, network.Target{To: "off"})
	wantNoAgent(t, err, `no agent "off" shares a community`)
	_, missing := w.net.Choose(ctx, sender, network.Target{To: "nobody"})
	if switchboard.ErrorMessage(err) != strings.Replace(switchboard.ErrorMessage(missing), "nobody", "off", 1) {
		t.Fatalf("a disabled account's agent %q and a missing agent %q read differently", err, missing)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))
	if _, _, err := w.net.Send(ctx, sender, network.Request{Target: network.Target{To: "off"},
		Message: &a2a.SendMessageRequest{Message: msg}}, nil); switchboard.ErrorCode(err) != switchboard.ENOAGENT {
		t.Fatalf("send to a disabled account's agent: %v", err)
	}
	tasks, _, err := w.db.FindTasks(ctx, switchboard.TaskFilter{AgentID: &off.ID, NoTotal: true})
	must(t, err)
	if len(tasks) != 0 {
		t.Fatalf("%d tasks made for a disabled account's agent", len(tasks))
	}
}
