package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard"
)

// domainTests cover agent domains (Agent.Domain): found by domain, held
// by one agent at most, bounded per account by AgentUpdate.DomainQuota.
var domainTests = map[string]func(*testing.T, Store){
	"AgentDomainFindUpdate":     testAgentDomain,
	"AgentDomainUnique":         testAgentDomainUnique,
	"AgentDomainQuota":          testAgentDomainQuota,
	"AgentDomainQuotaAtOnce":    testAgentDomainQuotaAtOnce,
	"AgentDomainFreedWithAgent": testAgentDomainFreed,
}

// setDomain gives g the domain d ("" removes it), with no quota.
func setDomain(s Store, g *switchboard.Agent, d string) (*switchboard.Agent, error) {
	return s.UpdateAgent(context.Background(), g.ID, switchboard.AgentUpdate{Domain: &d})
}

// testAgentDomain: an agent created with a domain, or given one, is found
// by it, every lookup after a change sees the change, and "" removes it.
func testAgentDomain(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: alice.ID, Handle: "bob", Name: "bob",
		Mode: switchboard.ModeInbox, Version: "1.0.0", Domain: "bot.example.com"}
	must(t, s.CreateAgent(ctx, g))
	got, err := s.FindAgentByDomain(ctx, "bot.example.com")
	must(t, err)
	if got.ID != g.ID || got.Domain != "bot.example.com" {
		t.Fatalf("by domain: %+v", got)
	}
	if got, err := s.FindAgentByHandle(ctx, "bob"); err != nil || got.Domain != "bot.example.com" {
		t.Fatalf("by handle: %+v, %v", got, err)
	}
	for _, none := range []string{"", "example.com", "other.example.com"} {
		_, err := s.FindAgentByDomain(ctx, none)
		wantCode(t, err, switchboard.ENOTFOUND)
	}

	upd, err := setDomain(s, g, "xn--bcher-kva.example")
	must(t, err)
	if upd.Domain != "xn--bcher-kva.example" {
		t.Fatalf("updated: %+v", upd)
	}
	_, err = s.FindAgentByDomain(ctx, "bot.example.com")
	wantCode(t, err, switchboard.ENOTFOUND)
	if got, err := s.FindAgentByDomain(ctx, "xn--bcher-kva.example"); err != nil || got.ID != g.ID {
		t.Fatalf("by the new domain: %+v, %v", got, err)
	}
	name := "renamed"
	upd, err = s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Name: &name})
	must(t, err)
	if upd.Domain != "xn--bcher-kva.example" {
		t.Fatalf("an update without Domain changed it: %+v", upd)
	}
	if got, err := s.FindAgentByDomain(ctx, "xn--bcher-kva.example"); err != nil || got.Name != "renamed" {
		t.Fatalf("by domain after a rename: %+v, %v", got, err)
	}

	upd, err = setDomain(s, g, "")
	must(t, err)
	if upd.Domain != "" {
		t.Fatalf("removed: %+v", upd)
	}
	_, err = s.FindAgentByDomain(ctx, "xn--bcher-kva.example")
	wantCode(t, err, switchboard.ENOTFOUND)
	all, err := s.FindAgents(ctx, switchboard.AgentFilter{AccountID: &alice.ID})
	must(t, err)
	if len(all) != 1 || all[0].Domain != "" {
		t.Fatalf("listed: %+v", all)
	}
}

// testAgentDomainUnique: a domain another agent holds is refused, on
// create and on update, with a message that names the domain and not the
// agent; the agent that holds it may set it again.
func testAgentDomainUnique(t *testing.T, s Store) {
	ctx := context.Background()
	alice, mallory := newAccount(t, s, "alice"), newAccount(t, s, "mallory")
	bob := newAgent(t, s, alice, "bob")
	_, err := setDomain(s, bob, "bot.example.com")
	must(t, err)
	_, err = setDomain(s, bob, "bot.example.com")
	must(t, err)

	eve := newAgent(t, s, mallory, "eve")
	_, err = setDomain(s, eve, "bot.example.com")
	wantCode(t, err, switchboard.EUNPROCESSABLE)
	if msg := switchboard.ErrorMessage(err); msg != "bot.example.com is already the domain of another agent" || strings.Contains(msg, "bob") {
		t.Fatalf("refusal: %q", msg)
	}
	dup := &switchboard.Agent{ID: switchboard.NewID(), AccountID: mallory.ID, Handle: "eve2", Mode: switchboard.ModeInbox, Domain: "bot.example.com"}
	wantCode(t, s.CreateAgent(ctx, dup), switchboard.EUNPROCESSABLE)
	_, err = s.FindAgentByHandle(ctx, "eve2")
	wantCode(t, err, switchboard.ENOTFOUND)
	// A taken handle is still a conflict of handles.
	taken := &switchboard.Agent{ID: switchboard.NewID(), AccountID: mallory.ID, Handle: "bob", Mode: switchboard.ModeInbox, Domain: "free.example.com"}
	wantCode(t, s.CreateAgent(ctx, taken), switchboard.ECONFLICT)
	if got, err := s.FindAgentByDomain(ctx, "bot.example.com"); err != nil || got.ID != bob.ID {
		t.Fatalf("the holder: %+v, %v", got, err)
	}
	// Agents without a domain are many.
	newAgent(t, s, mallory, "plain1")
	newAgent(t, s, mallory, "plain2")
}

// testAgentDomainQuota: DomainQuota bounds the account's agents that hold
// a domain; a change of domain keeps the count, removing one frees a
// place, another account counts on its own, and no quota is no bound.
func testAgentDomainQuota(t *testing.T, s Store) {
	ctx := context.Background()
	alice, carol := newAccount(t, s, "alice"), newAccount(t, s, "carol")
	two := 2
	set := func(g *switchboard.Agent, d string) error {
		_, err := s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Domain: &d, DomainQuota: &two})
		return err
	}
	a1, a2, a3 := newAgent(t, s, alice, "a1"), newAgent(t, s, alice, "a2"), newAgent(t, s, alice, "a3")
	must(t, set(a1, "one.example.com"))
	must(t, set(a2, "two.example.com"))
	err := set(a3, "three.example.com")
	wantCode(t, err, switchboard.EUNPROCESSABLE)
	if !strings.Contains(switchboard.ErrorMessage(err), "hold 2 domains") {
		t.Fatalf("refusal: %q", switchboard.ErrorMessage(err))
	}
	if _, err := s.FindAgentByDomain(ctx, "three.example.com"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("a refused domain was written: %v", err)
	}
	must(t, set(a2, "deux.example.com")) // a change of domain
	must(t, set(a1, ""))                 // frees a place
	must(t, set(a3, "three.example.com"))

	c1 := newAgent(t, s, carol, "c1")
	must(t, set(c1, "carol.example.com"))
	zero := 0
	d := "none.example.com"
	_, err = s.UpdateAgent(ctx, newAgent(t, s, carol, "c2").ID, switchboard.AgentUpdate{Domain: &d, DomainQuota: &zero})
	wantCode(t, err, switchboard.EUNPROCESSABLE)
	_, err = setDomain(s, a1, "four.example.com") // no quota
	must(t, err)
}

// testAgentDomainQuotaAtOnce: updates at once cannot pass the quota
// together, round after round.
func testAgentDomainQuotaAtOnce(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	const n, rounds = 12, 4
	agents := make([]*switchboard.Agent, n)
	for i := range agents {
		agents[i] = newAgent(t, s, alice, fmt.Sprintf("a%d", i))
	}
	one := 1
	for round := range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, n)
		for i, g := range agents {
			wg.Go(func() {
				<-start
				d := fmt.Sprintf("d%d-%d.example.com", i, round)
				_, errs[i] = s.UpdateAgent(ctx, g.ID, switchboard.AgentUpdate{Domain: &d, DomainQuota: &one})
			})
		}
		close(start)
		wg.Wait()
		passed := 0
		for _, err := range errs {
			switch switchboard.ErrorCode(err) {
			case "":
				passed++
			case switchboard.EUNPROCESSABLE:
			default:
				t.Fatalf("an update at once: %v", err)
			}
		}
		all, err := s.FindAgents(ctx, switchboard.AgentFilter{AccountID: &alice.ID})
		must(t, err)
		held := 0
		for _, g := range all {
			if g.Domain != "" {
				held++
				_, err := setDomain(s, g, "")
				must(t, err)
			}
		}
		if passed != 1 || held != 1 {
			t.Fatalf("round %d: %d updates passed a quota of 1, %d agents held a domain", round, passed, held)
		}
	}
}

// testAgentDomainFreed: a deleted agent's domain is free for another.
func testAgentDomainFreed(t *testing.T, s Store) {
	ctx := context.Background()
	alice := newAccount(t, s, "alice")
	bob := newAgent(t, s, alice, "bob")
	_, err := setDomain(s, bob, "bot.example.com")
	must(t, err)
	must(t, s.DeleteAgent(ctx, bob.ID))
	_, err = s.FindAgentByDomain(ctx, "bot.example.com")
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = setDomain(s, newAgent(t, s, alice, "carl"), "bot.example.com")
	must(t, err)
}
