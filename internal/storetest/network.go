package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

var networkTests = map[string]func(*testing.T, Store){
	"CommunityJoinLeave":          testCommunityJoinLeave,
	"CommunityClosed":             testCommunityClosed,
	"CommunityLimitPerAgent":      testCommunityLimit,
	"CommunityGoneWithAgent":      testCommunityAgentDelete,
	"AgentApproval":               testAgentApproval,
	"DiscoverGates":               testDiscoverGates,
	"DiscoverSkill":               testDiscoverSkill,
	"DiscoverPolicy":              testDiscoverPolicy,
	"DiscoverRankAndCheck":        testDiscoverRank,
	"DiscoveryGeneration":         testDiscoveryGeneration,
	"DiscoverReach":               testDiscoverReach,
	"DiscoverWebhookHealth":       testDiscoverWebhook,
	"DiscoverSendersCommunities":  testDiscoverSenders,
	"DiscoverSleepers":            testDiscoverSleepers,
	"DirectoryMembers":            testDirectoryMembers,
	"CommunityTokens":             testCommunityTokens,
	"TaskPeerKindFollowsEveryone": testTaskPeerKind,
}

// netAgent stores an agent of the network: connector, approved, accepting
// tasks, with the given skill (an id and a tag), in the communities.
func netAgent(t *testing.T, s Store, acct *switchboard.Account, handle, skill string, communities ...string) *switchboard.Agent {
	t.Helper()
	ctx := context.Background()
	g := &switchboard.Agent{
		ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Name: handle,
		Mode: switchboard.ModeConnector, Version: "1.0.0", AcceptsTasks: true, Approved: true,
	}
	if skill != "" {
		g.Skills = []a2a.AgentSkill{{ID: skill, Name: skill, Tags: []string{"Tag-" + skill}}}
	}
	must(t, s.CreateAgent(ctx, g))
	for _, c := range communities {
		_, err := s.JoinCommunity(ctx, g.ID, c, true)
		must(t, err)
	}
	return g
}

// connect opens a session for the agent, renewed now.
func connect(t *testing.T, s Store, g *switchboard.Agent) string {
	t.Helper()
	holder := "conn-" + g.Handle + "-" + switchboard.NewID()
	now := time.Now()
	_, err := s.OpenSession(context.Background(), &switchboard.AgentSession{AgentID: g.ID, Holder: holder, InstanceID: "i1",
		ConnectedAt: now, ExpiresAt: now.Add(time.Minute)})
	must(t, err)
	return holder
}

// liveNow is the Liveness of a query made now: sessions renewed within the
// last minute are live, within the last hour (or ended then) in their grace.
func liveNow() switchboard.Liveness {
	now := time.Now()
	return switchboard.Liveness{LiveSince: now.Add(-time.Minute), GraceSince: now.Add(-time.Hour), EndedSince: now.Add(-time.Hour)}
}

// graceOnly is a Liveness under which no session is live and every session
// opened or ended within the last hour is in its grace.
func graceOnly() switchboard.Liveness {
	now := time.Now()
	return switchboard.Liveness{LiveSince: now.Add(time.Hour), GraceSince: now.Add(-time.Hour), EndedSince: now.Add(-time.Hour)}
}

func discover(t *testing.T, s Store, q switchboard.DiscoveryQuery) *switchboard.Candidate {
	t.Helper()
	c, err := s.Discover(context.Background(), q)
	must(t, err)
	return c
}

func wantChosen(t *testing.T, c *switchboard.Candidate, want *switchboard.Agent) {
	t.Helper()
	switch {
	case want == nil && c != nil:
		t.Fatalf("discovery chose %s, want no one", c.Agent.Handle)
	case want != nil && c == nil:
		t.Fatalf("discovery chose no one, want %s", want.Handle)
	case want != nil && c.Agent.ID != want.ID:
		t.Fatalf("discovery chose %s, want %s", c.Agent.Handle, want.Handle)
	}
}

// testCommunityJoinLeave: joining creates an open community and is
// idempotent; counts, lists, shared membership and leaving follow.
func testCommunityJoinLeave(t *testing.T, s Store) {
	ctx := context.Background()
	alice, bob := newAccount(t, s, "alice"), newAccount(t, s, "bob")
	a := netAgent(t, s, alice, "a1", "")
	b := netAgent(t, s, bob, "b1", "")
	if _, err := s.FindCommunity(ctx, "research"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a community no one joined: %v", err)
	}
	if _, err := s.LookupCommunity(ctx, "research"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("lookup of a community no one joined: %v", err)
	}
	joined, err := s.JoinCommunity(ctx, a.ID, "research", false)
	must(t, err)
	if !joined {
		t.Fatal("first join: not joined")
	}
	if joined, err = s.JoinCommunity(ctx, a.ID, "research", false); err != nil || joined {
		t.Fatalf("second join: joined %v, %v; want false, nil", joined, err)
	}
	_, err = s.JoinCommunity(ctx, switchboard.NewID(), "research", true)
	wantCode(t, err, switchboard.ENOTFOUND)
	c, err := s.FindCommunity(ctx, "research")
	must(t, err)
	if c.Name != "research" || c.Closed || c.Members != 1 || c.CreatedAt.IsZero() {
		t.Fatalf("community %+v", c)
	}
	// The lookup reads the same community but for its member count.
	l, err := s.LookupCommunity(ctx, "research")
	must(t, err)
	if l.Name != c.Name || l.Closed != c.Closed || l.Members != 0 || !l.CreatedAt.Equal(c.CreatedAt) || !l.UpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("lookup %+v, community %+v", l, c)
	}
	if share, err := s.ShareCommunity(ctx, a.ID, b.ID); err != nil || share {
		t.Fatalf("share before b joins: %v %v", share, err)
	}
	_, err = s.JoinCommunity(ctx, b.ID, "research", false)
	must(t, err)
	_, err = s.JoinCommunity(ctx, b.ID, "ops", false)
	must(t, err)
	if share, err := s.ShareCommunity(ctx, a.ID, b.ID); err != nil || !share {
		t.Fatalf("share after b joins: %v %v", share, err)
	}
	all, err := s.FindCommunities(ctx, "")
	must(t, err)
	if len(all) != 2 || all[0].Name != "ops" || all[0].Members != 1 || all[1].Name != "research" || all[1].Members != 2 {
		t.Fatalf("every community: %+v", all)
	}
	mine, err := s.FindCommunities(ctx, alice.ID)
	must(t, err)
	if len(mine) != 1 || mine[0].Name != "research" || mine[0].Members != 2 {
		t.Fatalf("alice's communities: %+v", mine)
	}
	byAgent, err := s.FindAgentCommunities(ctx, []string{a.ID, b.ID, switchboard.NewID()})
	must(t, err)
	if !slices.Equal(byAgent[a.ID], []string{"research"}) || !slices.Equal(byAgent[b.ID], []string{"ops", "research"}) || len(byAgent) != 2 {
		t.Fatalf("communities by agent: %v", byAgent)
	}
	must(t, s.LeaveCommunity(ctx, a.ID, "research"))
	wantCode(t, s.LeaveCommunity(ctx, a.ID, "research"), switchboard.ENOTFOUND)
	if share, _ := s.ShareCommunity(ctx, a.ID, b.ID); share {
		t.Fatal("share after a left")
	}
	c, err = s.FindCommunity(ctx, "research")
	must(t, err)
	if c.Members != 1 {
		t.Fatalf("members after a left: %d", c.Members)
	}
}

// testCommunityClosed: a closed community takes members only with
// closedOK; the operator's setting creates and changes it.
func testCommunityClosed(t *testing.T, s Store) {
	ctx := context.Background()
	g := netAgent(t, s, newAccount(t, s, "alice"), "a1", "")
	c := &switchboard.Community{Name: "staff", Closed: true}
	created, err := s.SaveCommunity(ctx, c)
	must(t, err)
	if !created || !c.Closed || c.Members != 0 || c.CreatedAt.IsZero() {
		t.Fatalf("created %v %+v", created, c)
	}
	_, err = s.JoinCommunity(ctx, g.ID, "staff", false)
	wantCode(t, err, switchboard.EFORBIDDEN)
	if c, _ := s.FindCommunity(ctx, "staff"); c.Members != 0 {
		t.Fatalf("a refused join left a member: %+v", c)
	}
	joined, err := s.JoinCommunity(ctx, g.ID, "staff", true)
	if err != nil || !joined {
		t.Fatalf("operator's join: %v %v", joined, err)
	}
	// Already a member: a join that would be refused changes nothing and
	// reports that.
	if joined, err := s.JoinCommunity(ctx, g.ID, "staff", false); err != nil || joined {
		t.Fatalf("join of a member of a closed community: %v %v", joined, err)
	}
	c = &switchboard.Community{Name: "staff", Closed: false}
	created, err = s.SaveCommunity(ctx, c)
	must(t, err)
	if created || c.Closed || c.Members != 1 {
		t.Fatalf("reopened: created %v %+v", created, c)
	}
}

// testCommunityLimit: an agent is in MaxCommunitiesPerAgent communities
// at most.
func testCommunityLimit(t *testing.T, s Store) {
	ctx := context.Background()
	g := netAgent(t, s, newAccount(t, s, "alice"), "a1", "")
	for i := range switchboard.MaxCommunitiesPerAgent {
		_, err := s.JoinCommunity(ctx, g.ID, fmt.Sprintf("c%d", i), false)
		must(t, err)
	}
	_, err := s.JoinCommunity(ctx, g.ID, "one-too-many", false)
	wantCode(t, err, switchboard.EINVALID)
	if _, err := s.FindCommunity(ctx, "one-too-many"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a refused join created its community: %v", err)
	}
}

// testCommunityAgentDelete: a deleted agent leaves its communities.
func testCommunityAgentDelete(t *testing.T, s Store) {
	ctx := context.Background()
	g := netAgent(t, s, newAccount(t, s, "alice"), "a1", "s", "research")
	connect(t, s, g)
	must(t, s.DeleteAgent(ctx, g.ID))
	c, err := s.FindCommunity(ctx, "research")
	must(t, err)
	if c.Members != 0 {
		t.Fatalf("members after the agent's deletion: %d", c.Members)
	}
	if m, _ := s.FindAgentCommunities(ctx, []string{g.ID}); len(m) != 0 {
		t.Fatalf("communities of a deleted agent: %v", m)
	}
}

// testAgentApproval: approval is stored, read and changed like any field.
func testAgentApproval(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "new", Mode: switchboard.ModeConnector, AcceptsTasks: true}
	must(t, s.CreateAgent(ctx, g))
	got, err := s.FindAgentByHandle(ctx, "new")
	must(t, err)
	if got.Approved {
		t.Fatal("an agent created unapproved reads approved")
	}
	yes := true
	got, err = s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Approved: &yes})
	must(t, err)
	if !got.Approved {
		t.Fatal("UpdateAgent did not approve")
	}
	if got, _ := s.FindAgentByID(ctx, g.ID); !got.Approved {
		t.Fatal("approval not stored")
	}
}

// testDiscoverGates: each gate keeps its agents out (unapproved, paused,
// disabled account, inbox mode, not connected, the sender itself), and
// CountDiscoveryGates says which gate emptied the list.
func testDiscoverGates(t *testing.T, s Store) {
	ctx := context.Background()
	acct, off := newAccount(t, s, "alice"), newAccount(t, s, "gone")
	sender := netAgent(t, s, acct, "sender", "", "lab")
	connect(t, s, sender)
	q := switchboard.DiscoveryQuery{Communities: []string{"lab"}, SenderID: sender.ID, Liveness: liveNow()}
	wantChosen(t, discover(t, s, q), nil) // the sender alone: not itself
	wantGates(t, s, q, switchboard.DiscoveryGates{})

	no := false
	unapproved := netAgent(t, s, acct, "unapproved", "", "lab")
	_, err := s.UpdateAgent(ctx, unapproved.ID, switchboard.AgentUpdate{Approved: &no})
	must(t, err)
	connect(t, s, unapproved)
	paused := netAgent(t, s, acct, "paused", "", "lab")
	_, err = s.UpdateAgent(ctx, paused.ID, switchboard.AgentUpdate{AcceptsTasks: &no})
	must(t, err)
	connect(t, s, paused)
	disabled := netAgent(t, s, off, "disabled", "", "lab")
	connect(t, s, disabled)
	yes := true
	_, err = s.UpdateAccount(ctx, off.ID, switchboard.AccountUpdate{Disabled: &yes})
	must(t, err)
	inbox := netAgent(t, s, acct, "inbox", "", "lab")
	mode := switchboard.ModeInbox
	_, err = s.UpdateAgent(ctx, inbox.ID, switchboard.AgentUpdate{Mode: &mode})
	must(t, err)
	away := netAgent(t, s, acct, "away", "", "lab") // never connected
	wantChosen(t, discover(t, s, q), nil)
	wantGates(t, s, q, switchboard.DiscoveryGates{Members: 4, Approved: 3, Accepting: 2, Skilled: 2, Reachable: 0})

	connect(t, s, away)
	wantChosen(t, discover(t, s, q), away)
	wantGates(t, s, q, switchboard.DiscoveryGates{Members: 4, Approved: 3, Accepting: 2, Skilled: 2, Reachable: 1})
	// Without a sender, the sender is a candidate like any other.
	for range 4 {
		if c := discover(t, s, switchboard.DiscoveryQuery{Communities: []string{"lab"}, Liveness: liveNow()}); c.Agent.ID != away.ID && c.Agent.ID != sender.ID {
			t.Fatalf("without a sender: %s", c.Agent.Handle)
		}
	}
	if c := discover(t, s, switchboard.DiscoveryQuery{Communities: []string{"elsewhere"}, Liveness: liveNow()}); c != nil {
		t.Fatalf("in a community no one is in: %s", c.Agent.Handle)
	}
}

func wantGates(t *testing.T, s Store, q switchboard.DiscoveryQuery, want switchboard.DiscoveryGates) {
	t.Helper()
	got, err := s.CountDiscoveryGates(context.Background(), q)
	must(t, err)
	if got != want {
		t.Fatalf("gates %+v, want %+v", got, want)
	}
}

// testDiscoverSkill: a skill matches a public skill's id or tag, in any
// case; a change of the card changes what matches; extended skills do
// not count.
func testDiscoverSkill(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	coder := netAgent(t, s, acct, "coder", "code", "lab")
	writer := netAgent(t, s, acct, "writer", "prose", "lab")
	connect(t, s, coder)
	connect(t, s, writer)
	q := switchboard.DiscoveryQuery{Communities: []string{"lab"}, Liveness: liveNow()}
	for _, skill := range []string{"code", "CODE", "tag-code", " Tag-Code "} {
		q.Skill = skill
		wantChosen(t, discover(t, s, q), coder)
	}
	q.Skill = "prose"
	wantChosen(t, discover(t, s, q), writer)
	q.Skill = "poetry"
	wantChosen(t, discover(t, s, q), nil)
	wantGates(t, s, q, switchboard.DiscoveryGates{Members: 2, Approved: 2, Accepting: 2, Skilled: 0, Reachable: 0})

	skills := []a2a.AgentSkill{{ID: "poetry", Name: "Poetry", Tags: []string{}}}
	ext := []a2a.AgentSkill{{ID: "secret", Name: "Secret", Tags: []string{}}}
	_, err := s.UpdateAgent(ctx, writer.ID, switchboard.AgentUpdate{Skills: &skills, ExtendedSkills: &ext})
	must(t, err)
	wantChosen(t, discover(t, s, q), writer)
	q.Skill = "prose"
	wantChosen(t, discover(t, s, q), nil)
	q.Skill = "secret"
	wantChosen(t, discover(t, s, q), nil)
	// An update that leaves the skills alone keeps them.
	desc := "still a poet"
	_, err = s.UpdateAgent(ctx, writer.ID, switchboard.AgentUpdate{Description: &desc})
	must(t, err)
	q.Skill = "poetry"
	wantChosen(t, discover(t, s, q), writer)
}

// testDiscoverPolicy: the fewest unfinished tasks win; equals take turns
// by the round-robin cursor.
func testDiscoverPolicy(t *testing.T, s Store) {
	acct := newAccount(t, s, "alice")
	var agents []*switchboard.Agent
	for i := range 3 {
		g := netAgent(t, s, acct, fmt.Sprintf("worker-%d", i), "work", "lab")
		connect(t, s, g)
		agents = append(agents, g)
	}
	slices.SortFunc(agents, func(a, b *switchboard.Agent) int { return compareStrings(a.ID, b.ID) })
	q := switchboard.DiscoveryQuery{Communities: []string{"lab"}, Skill: "work", Liveness: liveNow()}
	// Round robin among equals: each after the last, wrapping.
	var order []string
	for range 6 {
		c := discover(t, s, q)
		if c.OpenTasks != 0 || c.Reach != switchboard.ReachLive {
			t.Fatalf("candidate %+v", c)
		}
		order = append(order, c.Agent.ID)
		q.After = c.Agent.ID
	}
	want := []string{agents[0].ID, agents[1].ID, agents[2].ID, agents[0].ID, agents[1].ID, agents[2].ID}
	if !slices.Equal(order, want) {
		t.Fatalf("round robin %v, want %v", order, want)
	}
	// Unfinished tasks weigh: agents[0] and [1] get work, [2] is chosen
	// whatever the cursor says; then [1] has fewer than [0].
	now := time.Now()
	for i, g := range []*switchboard.Agent{agents[0], agents[0], agents[1]} {
		task := newTask(g, "bob", "ctx", fmt.Sprintf("m%d", i), now)
		_, err := s.CreateTask(context.Background(), task, &switchboard.TaskChange{MessageID: fmt.Sprintf("m%d", i)})
		must(t, err)
	}
	q.After = agents[1].ID
	c := discover(t, s, q)
	if c.Agent.ID != agents[2].ID || c.OpenTasks != 0 {
		t.Fatalf("chose %s with %d tasks, want the idle one", c.Agent.Handle, c.OpenTasks)
	}
	q.Skill = "work"
	q.SenderID = agents[2].ID // out of the running
	if c := discover(t, s, q); c.Agent.ID != agents[1].ID || c.OpenTasks != 1 {
		t.Fatalf("chose %s with %d tasks, want the one with one", c.Agent.Handle, c.OpenTasks)
	}
}

// testDiscoverRank: RankCandidates lists each candidate once (a member of
// two of the communities too) with its handle, reach, unfinished tasks
// and last renewal, and none that a gate keeps out; Discover of one agent
// (AgentID) checks it.
func testDiscoverRank(t *testing.T, s Store) {
	ctx := context.Background()
	start := time.Now()
	acct := newAccount(t, s, "alice")
	both := netAgent(t, s, acct, "both", "x", "lab", "ops")
	connect(t, s, both)
	idle := netAgent(t, s, acct, "idle", "x", "lab")
	connect(t, s, idle)
	paused := netAgent(t, s, acct, "paused", "x", "lab")
	connect(t, s, paused)
	_, err := s.UpdateAgent(ctx, paused.ID, switchboard.AgentUpdate{AcceptsTasks: new(false)})
	must(t, err)
	offline := netAgent(t, s, acct, "offline", "x", "lab")
	unskilled := netAgent(t, s, acct, "unskilled", "y", "lab")
	connect(t, s, unskilled)
	task := newTask(both, "bob", "ctx", "m1", time.Now())
	_, err = s.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: "m1"})
	must(t, err)

	q := switchboard.DiscoveryQuery{Communities: []string{"lab", "ops"}, Skill: "X", Liveness: liveNow()}
	got, err := s.RankCandidates(ctx, q)
	must(t, err)
	slices.SortFunc(got, func(a, b switchboard.Ranked) int { return compareStrings(a.AgentID, b.AgentID) })
	for i, r := range got {
		if r.RenewedAt.Before(start.Add(-time.Millisecond)) || r.RenewedAt.After(time.Now()) {
			t.Errorf("%s renewed at %v, want at its connection (after %v)", r.Handle, r.RenewedAt, start)
		}
		got[i].RenewedAt = time.Time{}
	}
	want := []switchboard.Ranked{{AgentID: both.ID, Handle: "both", Reach: switchboard.ReachLive, OpenTasks: 1}, {AgentID: idle.ID, Handle: "idle", Reach: switchboard.ReachLive}}
	slices.SortFunc(want, func(a, b switchboard.Ranked) int { return compareStrings(a.AgentID, b.AgentID) })
	if !slices.Equal(got, want) {
		t.Fatalf("ranked %+v, want %+v", got, want)
	}
	q.SenderID = idle.ID
	if got, err := s.RankCandidates(ctx, q); err != nil || len(got) != 1 || got[0].AgentID != both.ID {
		t.Fatalf("ranked without the sender: %+v, %v", got, err)
	}
	q.SenderID = ""
	for _, g := range []*switchboard.Agent{both, idle} {
		q.AgentID = g.ID
		c := discover(t, s, q)
		wantChosen(t, c, g)
	}
	for _, g := range []*switchboard.Agent{paused, offline, unskilled} {
		q.AgentID = g.ID
		wantChosen(t, discover(t, s, q), nil)
	}
	q.AgentID = both.ID
	q.Communities = []string{"elsewhere"}
	wantChosen(t, discover(t, s, q), nil)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// testDiscoverReach: a live agent goes before one in its grace; an agent
// whose session ended (or stopped being renewed) is in its grace only as
// long as the Liveness says; a session renewed is live again.
func testDiscoverReach(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	dropped := netAgent(t, s, acct, "dropped", "x", "lab")
	stale := netAgent(t, s, acct, "stale", "x", "lab")
	holder := connect(t, s, dropped)
	must(t, s.CloseSessions(ctx, []string{holder}))
	connect(t, s, stale)
	q := switchboard.DiscoveryQuery{Communities: []string{"lab"}, Liveness: graceOnly()}
	c := discover(t, s, q)
	if c == nil || c.Reach != switchboard.ReachGrace {
		t.Fatalf("in grace: %+v", c)
	}
	// Past the grace of both: no one.
	now := time.Now()
	q.Liveness = switchboard.Liveness{LiveSince: now.Add(time.Hour), GraceSince: now.Add(time.Hour), EndedSince: now.Add(time.Hour)}
	wantChosen(t, discover(t, s, q), nil)
	// The ended session's agent alone is in its grace when the grace
	// reaches back to its end but not to the other's renewal.
	q.Liveness = switchboard.Liveness{LiveSince: now.Add(time.Hour), GraceSince: now.Add(time.Hour), EndedSince: now.Add(-time.Hour)}
	wantChosen(t, discover(t, s, q), dropped)
	q.Liveness = switchboard.Liveness{LiveSince: now.Add(time.Hour), GraceSince: now.Add(-time.Hour), EndedSince: now.Add(time.Hour)}
	wantChosen(t, discover(t, s, q), stale)
	// Live beats grace, whatever else.
	q.Liveness = liveNow()
	for range 3 {
		c := discover(t, s, q)
		if c.Agent.ID != stale.ID || c.Reach != switchboard.ReachLive {
			t.Fatalf("live one: %s reach %d", c.Agent.Handle, c.Reach)
		}
		q.After = c.Agent.ID
	}
	// A renewal is what counts as live.
	time.Sleep(2 * time.Millisecond)
	mark := time.Now()
	q.Liveness = switchboard.Liveness{LiveSince: mark, GraceSince: mark.Add(-time.Hour), EndedSince: mark.Add(-time.Hour)}
	if c := discover(t, s, q); c.Reach != switchboard.ReachGrace {
		t.Fatalf("before the renewal: reach %d", c.Reach)
	}
	sess, err := s.FindSession(ctx, stale.ID)
	must(t, err)
	renewed, err := s.RenewSessions(ctx, []string{sess.Holder}, time.Now().Add(time.Minute))
	must(t, err)
	if len(renewed) != 1 {
		t.Fatalf("renewed %v", renewed)
	}
	if c := discover(t, s, q); c.Agent.ID != stale.ID || c.Reach != switchboard.ReachLive {
		t.Fatalf("after the renewal: %s reach %d", c.Agent.Handle, c.Reach)
	}
}

// testDiscoverWebhook: a webhook agent is live unless a delivery waits for
// a retry after a failed attempt; an inbox agent never is.
func testDiscoverWebhook(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	hook := netAgent(t, s, acct, "hook", "x", "lab")
	mode := switchboard.ModeWebhook
	_, err := s.UpdateAgent(ctx, hook.ID, switchboard.AgentUpdate{Mode: &mode})
	must(t, err)
	q := switchboard.DiscoveryQuery{Communities: []string{"lab"}, Liveness: liveNow()}
	c := discover(t, s, q)
	if c == nil || c.Agent.ID != hook.ID || c.Reach != switchboard.ReachLive {
		t.Fatalf("a healthy webhook agent: %+v", c)
	}
	hook.Mode = mode
	_, d := queueTask(t, s, hook, "m1", time.Now().Add(-time.Second))
	claimed, err := s.ClaimDueDeliveries(ctx, switchboard.ModeWebhook, "dispatcher", 10, 4, time.Minute)
	must(t, err)
	if len(claimed) != 1 || claimed[0].ID != d.ID {
		t.Fatalf("claimed %v", claimed)
	}
	must(t, s.RetryDelivery(ctx, d.ID, time.Now().Add(time.Minute), "503 Service Unavailable"))
	wantChosen(t, discover(t, s, q), nil)
	members, err := s.FindMembers(ctx, switchboard.MemberFilter{Communities: []string{"lab"}, Liveness: liveNow()})
	must(t, err)
	if len(members) != 1 || members[0].Reach != switchboard.ReachNone {
		t.Fatalf("a failing webhook agent in the directory: %+v", members)
	}
}

// testDiscoverSenders: without communities, discovery looks in every
// community of the sender, and only there.
func testDiscoverSenders(t *testing.T, s Store) {
	acct := newAccount(t, s, "alice")
	sender := netAgent(t, s, acct, "sender", "", "lab", "ops")
	inLab := netAgent(t, s, acct, "in-lab", "x", "lab")
	inOps := netAgent(t, s, acct, "in-ops", "y", "ops")
	outside := netAgent(t, s, acct, "outside", "z", "elsewhere")
	for _, g := range []*switchboard.Agent{inLab, inOps, outside} {
		connect(t, s, g)
	}
	q := switchboard.DiscoveryQuery{SenderID: sender.ID, Liveness: liveNow()}
	q.Skill = "y"
	wantChosen(t, discover(t, s, q), inOps)
	q.Skill = "x"
	wantChosen(t, discover(t, s, q), inLab)
	q.Skill = "z"
	wantChosen(t, discover(t, s, q), nil)
	wantGates(t, s, q, switchboard.DiscoveryGates{Members: 2, Approved: 2, Accepting: 2})
}

// testDirectoryMembers: a directory lists the members of the communities
// asked for, by handle, with their reach and the communities among those
// asked for; it filters by skill and liveness, leaves one agent out, and
// pages.
func testDirectoryMembers(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	a := netAgent(t, s, acct, "a-live", "x", "lab", "ops")
	b := netAgent(t, s, acct, "b-away", "y", "lab")
	c := netAgent(t, s, acct, "c-ops", "x", "ops", "hidden")
	netAgent(t, s, acct, "d-elsewhere", "x", "elsewhere")
	connect(t, s, a)
	connect(t, s, c)
	f := switchboard.MemberFilter{Communities: []string{"lab", "ops"}, Liveness: liveNow()}
	ms, err := s.FindMembers(ctx, f)
	must(t, err)
	if got := handles(ms); !slices.Equal(got, []string{"a-live", "b-away", "c-ops"}) {
		t.Fatalf("members %v", got)
	}
	if !slices.Equal(ms[0].Communities, []string{"lab", "ops"}) || !slices.Equal(ms[2].Communities, []string{"ops"}) {
		t.Fatalf("communities shown: %v %v", ms[0].Communities, ms[2].Communities)
	}
	if ms[0].Reach != switchboard.ReachLive || ms[1].Reach != switchboard.ReachNone || !ms[0].Agent.Approved {
		t.Fatalf("reach %d %d", ms[0].Reach, ms[1].Reach)
	}
	f.OnlyLive = true
	f.Skill = "X"
	f.ExcludeAgentID = c.ID
	ms, err = s.FindMembers(ctx, f)
	must(t, err)
	if got := handles(ms); !slices.Equal(got, []string{"a-live"}) {
		t.Fatalf("live members with skill x but c: %v", got)
	}
	page, err := s.FindMembers(ctx, switchboard.MemberFilter{Communities: []string{"lab", "ops"}, Liveness: liveNow(), Limit: 2})
	must(t, err)
	rest, err := s.FindMembers(ctx, switchboard.MemberFilter{Communities: []string{"lab", "ops"}, Liveness: liveNow(), After: page[1].Agent.Handle})
	must(t, err)
	if got := append(handles(page), handles(rest)...); !slices.Equal(got, []string{"a-live", "b-away", "c-ops"}) {
		t.Fatalf("pages %v", got)
	}
	every, err := s.FindMembers(ctx, switchboard.MemberFilter{Liveness: liveNow()})
	must(t, err)
	if len(every) != 4 || !slices.Equal(every[2].Communities, []string{"hidden", "ops"}) {
		t.Fatalf("every member: %v", handles(every))
	}
	if none, err := s.FindMembers(ctx, switchboard.MemberFilter{Communities: []string{}}); err != nil || len(none) != 0 {
		t.Fatalf("members of no community: %v %v", none, err)
	}
	_ = b
}

func handles(ms []*switchboard.Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Agent.Handle)
	}
	return out
}

// testCommunityTokens: a community's peer tokens are found by community,
// unique per label and issuer there, rotated and revoked like any.
func testCommunityTokens(t *testing.T, s Store) {
	ctx := context.Background()
	alice, bob := newAccount(t, s, "alice"), newAccount(t, s, "bob")
	peer := switchboard.TokenPeer
	issue := func(acct *switchboard.Account, community, label string, replace bool) (*switchboard.Token, error) {
		_, hash := switchboard.NewToken(peer)
		tok := &switchboard.Token{Hash: hash, Kind: peer, AccountID: acct.ID, Community: community, Label: label}
		return tok, s.CreateToken(ctx, tok, replace)
	}
	t1, err := issue(alice, "lab", "carol", false)
	must(t, err)
	got, err := s.FindTokenByHash(ctx, t1.Hash)
	must(t, err)
	if got.Community != "lab" || got.AgentID != "" || got.AccountID != alice.ID || got.PeerID == "" {
		t.Fatalf("community token %+v", got)
	}
	_, err = issue(alice, "lab", "carol", false)
	wantCode(t, err, switchboard.ECONFLICT)
	_, err = issue(bob, "lab", "carol", false) // another issuer: another peer
	must(t, err)
	_, err = issue(alice, "ops", "carol", false) // another community
	must(t, err)
	t2, err := issue(alice, "lab", "carol", true) // a rotation keeps the peer
	must(t, err)
	if t2.PeerID != got.PeerID {
		t.Fatalf("rotation changed the peer %s -> %s", got.PeerID, t2.PeerID)
	}
	lab := "lab"
	toks, err := s.FindTokens(ctx, switchboard.TokenFilter{Community: &lab, Active: true})
	must(t, err)
	if len(toks) != 2 {
		t.Fatalf("active tokens of lab: %d", len(toks))
	}
	label := "carol"
	n, err := s.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &peer, Community: &lab, AccountID: &alice.ID, Label: &label})
	must(t, err)
	if n != 1 {
		t.Fatalf("revoked %d", n)
	}
	if _, err := s.FindTokenByHash(ctx, t2.Hash); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("revoked token found: %v", err)
	}
}

// testTaskPeerKind: a task keeps the kind of its peer; a peer that is no
// one agent's finds its tasks on every agent, and only its own.
func testTaskPeerKind(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	a, b := newAgent(t, s, acct, "a1"), newAgent(t, s, acct, "b1")
	sender := switchboard.NewID()
	now := time.Now()
	var ids []a2a.TaskID
	for i, g := range []*switchboard.Agent{a, b} {
		task := newTask(g, "sender", "ctx", fmt.Sprintf("m%d", i), now.Add(time.Duration(i)*time.Second))
		task.PeerID, task.PeerKind = sender, switchboard.PeerAgent
		_, err := s.CreateTask(ctx, task, &switchboard.TaskChange{MessageID: fmt.Sprintf("m%d", i)})
		must(t, err)
		ids = append(ids, task.ID())
	}
	outside := newTask(a, "sender", "ctx", "m9", now) // the same id, an outside peer's
	outside.PeerID = sender
	_, err := s.CreateTask(ctx, outside, &switchboard.TaskChange{MessageID: "m9"})
	must(t, err)
	got, err := s.FindTaskByID(ctx, ids[0])
	must(t, err)
	if got.PeerKind != switchboard.PeerAgent {
		t.Fatalf("peer kind %q", got.PeerKind)
	}
	kind := switchboard.PeerAgent
	tasks, total, err := s.FindTasks(ctx, switchboard.TaskFilter{PeerID: &sender, PeerKind: &kind})
	must(t, err)
	if total != 2 || len(tasks) != 2 || tasks[0].ID() != ids[1] || tasks[1].ID() != ids[0] {
		t.Fatalf("the agent peer's tasks: %d %v", total, tasks)
	}
	p := switchboard.Peer{ID: sender, Kind: switchboard.PeerAgent}
	if !tasks[0].VisibleTo(p) || !tasks[1].VisibleTo(p) {
		t.Fatal("the sending agent cannot see its tasks")
	}
	if outside.VisibleTo(p) || tasks[0].VisibleTo(switchboard.Peer{AgentID: b.ID, ID: sender}) {
		t.Fatal("a peer of another kind sees the tasks")
	}
}

// testDiscoverSleepers: a query for sleepers chooses among the inbox
// agents that pass every gate and can be woken (a wake configured, the
// last finished one sent), fewest unfinished tasks first; the gates count
// them as Asleep and the directory marks them Wakeable.
func testDiscoverSleepers(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "owner")
	inbox := switchboard.ModeInbox
	sleeper := func(handle string, withWake bool) *switchboard.Agent {
		g := netAgent(t, s, acct, handle, "translate", "lab")
		_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Mode: &inbox})
		must(t, err)
		if withWake {
			must(t, s.SaveWakeConfig(ctx, wakeConfig(g, 0, 0, time.Now())))
		}
		return g
	}
	me := netAgent(t, s, acct, "me", "", "lab")
	sleepy := sleeper("sleepy", true)
	sleeper("nowake", false)
	broken := sleeper("broken", true)
	ok, err := s.EnqueueWake(ctx, &switchboard.WakeRequest{AgentID: broken.ID, ContextID: "c1", Kind: switchboard.WakeInbound, Preview: "x"})
	must(t, err)
	if !ok {
		t.Fatal("no wake queued")
	}
	ws, err := s.ClaimWakes(ctx, "h", 10, time.Minute)
	must(t, err)
	if len(ws) != 1 {
		t.Fatalf("claimed %d wakes", len(ws))
	}
	_, err = s.FinishWake(ctx, ws[0].ID, "h", switchboard.WakeFailed, 404, "gone")
	must(t, err)

	q := switchboard.DiscoveryQuery{Communities: []string{"lab"}, SenderID: me.ID, Skill: "translate", Liveness: liveNow()}
	wantChosen(t, discover(t, s, q), nil)
	wantGates(t, s, q, switchboard.DiscoveryGates{Members: 3, Approved: 3, Accepting: 3, Skilled: 3, Asleep: 1})
	q.Sleepers = true
	c := discover(t, s, q)
	wantChosen(t, c, sleepy)
	if c.Reach != switchboard.ReachNone {
		t.Fatalf("a sleeper's reach: %v", c.Reach)
	}
	ms, err := s.FindMembers(ctx, switchboard.MemberFilter{Communities: []string{"lab"}, Liveness: liveNow()})
	must(t, err)
	for _, m := range ms {
		if want := m.Agent.ID == sleepy.ID; m.Wakeable != want {
			t.Errorf("%s: wakeable %v, want %v", m.Agent.Handle, m.Wakeable, want)
		}
	}
}
