package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// oauthTests cover the OAuth clients, codes and grants of MCP clients.
var oauthTests = map[string]func(*testing.T, Store){
	"OAuthClientLimits":           testOAuthClients,
	"OAuthClientLimitsConcurrent": testOAuthClientsConcurrent,
	"OAuthClientFairShare":        testOAuthClientsFairShare,
	"OAuthCodeOnce":               testOAuthCodeOnce,
	"OAuthCodeReplay":             testOAuthCodeReplay,
	"OAuthGrantRotation":          testOAuthGrants,
	"OAuthGrantList":              testOAuthGrantList,
}

func newOAuthClient(id, requester string, at time.Time) *switchboard.OAuthClient {
	return &switchboard.OAuthClient{ID: id, Name: "Claude", RedirectURIs: []string{"http://127.0.0.1/callback", "https://app.example/cb"},
		ApplicationType: "native", Requester: requester, CreatedAt: at}
}

// testOAuthClients: a client is found as stored; an address registers at
// most PerRequester in the window, also once its clients are gone; at
// MaxClients, clients without a grant registered before PruneBefore, and
// unused ones (no grant, no code) registered before UnusedBefore, are
// pruned; then the address that holds the most clients gives up its
// oldest unused one to an address that holds fewer, and EQUOTA when none
// does.
func testOAuthClients(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	limAt := func(at time.Time) switchboard.OAuthClientLimits {
		return switchboard.OAuthClientLimits{PerRequester: 2, Window: time.Hour, MaxClients: 3,
			PruneBefore: at.Add(-time.Hour), UnusedBefore: at.Add(-10 * time.Minute)}
	}
	lim := limAt(now)
	gone := func(id string) {
		t.Helper()
		_, err := s.FindOAuthClient(ctx, id)
		wantCode(t, err, switchboard.ENOTFOUND)
	}
	kept := func(id string) {
		t.Helper()
		_, err := s.FindOAuthClient(ctx, id)
		must(t, err)
	}
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c1", "192.0.2.1", now.Add(-2*time.Hour)), lim))
	got, err := s.FindOAuthClient(ctx, "c1")
	must(t, err)
	if got.Name != "Claude" || len(got.RedirectURIs) != 2 || got.RedirectURIs[1] != "https://app.example/cb" ||
		got.ApplicationType != "native" || !got.CreatedAt.Equal(now.Add(-2*time.Hour)) {
		t.Fatalf("found %+v", got)
	}
	_, err = s.FindOAuthClient(ctx, "nope")
	wantCode(t, err, switchboard.ENOTFOUND)
	wantCode(t, s.CreateOAuthClient(ctx, newOAuthClient("c1", "192.0.2.9", now), lim), switchboard.ECONFLICT)

	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c2", "192.0.2.2", now), lim))
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c3", "192.0.2.2", now), lim))
	wantCode(t, s.CreateOAuthClient(ctx, newOAuthClient("c4", "192.0.2.2", now), lim), switchboard.ERATELIMITED)
	// Three clients: c1 is old and holds no grant, so it makes room.
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c5", "192.0.2.3", now), lim))
	gone("c1")
	// c5's owner consented: it holds a code, and is in use.
	must(t, s.CreateOAuthCode(ctx, &switchboard.OAuthCode{Hash: "code-c5", ClientID: "c5", Target: switchboard.OAuthTarget{AccountID: "acct"},
		CreatedAt: now, ExpiresAt: now.Add(5 * time.Minute)}))
	// Full of young clients: .2 holds the most, and gives its oldest up
	// to .4, which holds none.
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c6", "192.0.2.4", now), lim))
	gone("c2")
	kept("c3")
	// .3 holds one, as many as any address with an unused client: no room.
	wantCode(t, s.CreateOAuthClient(ctx, newOAuthClient("c7", "192.0.2.3", now), lim), switchboard.EQUOTA)
	kept("c3")
	kept("c6")

	// Eleven minutes on, c3 and c6 are unused for longer than allowed:
	// pruned; c5, with its code, stays.
	later := now.Add(11 * time.Minute)
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c8", "192.0.2.5", later), limAt(later)))
	gone("c3")
	gone("c6")
	kept("c5")
	// .2's clients are gone, its registrations still count for the hour.
	wantCode(t, s.CreateOAuthClient(ctx, newOAuthClient("c9", "192.0.2.2", later), limAt(later)), switchboard.ERATELIMITED)
	evenLater := now.Add(61 * time.Minute)
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c9", "192.0.2.2", evenLater), limAt(evenLater)))

	// A client with a grant is never pruned; one with only a code is,
	// after PruneBefore.
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "helper")
	must(t, s.CreateOAuthGrant(ctx, &switchboard.OAuthGrant{RefreshHash: "r-c8", AccessHash: "a-c8", ClientID: "c8",
		Target: switchboard.OAuthTarget{AccountID: acct.ID, AgentID: g.ID}, Label: "mcp-c8", CreatedAt: later}))
	twoHours := now.Add(2 * time.Hour)
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c10", "192.0.2.6", twoHours), limAt(twoHours)))
	gone("c5")
	gone("c9")
	kept("c8")
	must(t, s.CreateOAuthClient(ctx, newOAuthClient("c11", "192.0.2.7", twoHours), limAt(twoHours)))
	// c8 (a grant), c10 and c11 (young, of addresses holding one each):
	// nothing can go for an address that holds one.
	wantCode(t, s.CreateOAuthClient(ctx, newOAuthClient("c12", "192.0.2.6", twoHours), limAt(twoHours)), switchboard.EQUOTA)
	kept("c8")
}

// testOAuthClientsFairShare: ten addresses, each registering as many
// clients as its limit allows, fill the table; an eleventh address still
// registers, and so does every further new address: each time the oldest
// unused client of an address holding the most makes room.
func testOAuthClientsFairShare(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	lim := switchboard.OAuthClientLimits{PerRequester: 3, Window: time.Hour, MaxClients: 30,
		PruneBefore: now.Add(-time.Hour), UnusedBefore: now.Add(-10 * time.Minute)}
	for a := range 10 {
		from := fmt.Sprintf("198.51.100.%d", a)
		for i := range 3 {
			must(t, s.CreateOAuthClient(ctx, newOAuthClient(fmt.Sprintf("share-%d-%d", a, i), from, now.Add(time.Duration(a*3+i)*time.Millisecond)), lim))
		}
		wantCode(t, s.CreateOAuthClient(ctx, newOAuthClient(fmt.Sprintf("share-%d-x", a), from, now), lim), switchboard.ERATELIMITED)
	}
	for k := range 3 {
		c := newOAuthClient(fmt.Sprintf("newcomer-%d", k), fmt.Sprintf("203.0.113.%d", k), now.Add(time.Second))
		if err := s.CreateOAuthClient(ctx, c, lim); err != nil {
			t.Fatalf("a new address, after ten filled the table within their limits: %v", err)
		}
	}
	// Each gave up the oldest client of an address holding the most:
	// the first three addresses' oldest, one each.
	for id, want := range map[string]bool{"share-0-0": false, "share-1-0": false, "share-2-0": false,
		"share-0-1": true, "share-3-0": true, "newcomer-0": true} {
		_, err := s.FindOAuthClient(ctx, id)
		if got := err == nil; got != want {
			t.Fatalf("%s kept %v, want %v (%v)", id, got, want, err)
		}
	}
}

// testOAuthClientsConcurrent: registrations made at once (on PostgreSQL,
// on connections of their own, as instances make them) keep the limits:
// of 12 from one address with room for 2, two are taken; of 12 from new
// addresses with room for 7 clients, each is taken and 7 clients are
// left; when every client is in use, none is taken.
func testOAuthClientsConcurrent(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	race := func(prefix string, lim switchboard.OAuthClientLimits, requester func(int) string) (taken int) {
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.CreateOAuthClient(ctx, newOAuthClient(fmt.Sprintf("%s%d", prefix, i), requester(i), now), lim)
			})
		}
		wg.Wait()
		for _, err := range errs {
			switch switchboard.ErrorCode(err) {
			case "":
				taken++
			case switchboard.ERATELIMITED, switchboard.EQUOTA:
			default:
				t.Fatalf("a registration failed otherwise: %v", err)
			}
		}
		return taken
	}
	var left []string
	count := func() int {
		left = left[:0]
		for _, prefix := range []string{"same", "many", "full"} {
			for i := range 12 {
				if _, err := s.FindOAuthClient(ctx, fmt.Sprintf("%s%d", prefix, i)); err == nil {
					left = append(left, fmt.Sprintf("%s%d", prefix, i))
				}
			}
		}
		return len(left)
	}
	perAddress := switchboard.OAuthClientLimits{PerRequester: 2, Window: time.Hour}
	if n := race("same", perAddress, func(int) string { return "198.51.100.1" }); n != 2 {
		t.Fatalf("one address, room for 2: %d registered", n)
	}
	total := switchboard.OAuthClientLimits{MaxClients: 7, PruneBefore: now.Add(-time.Hour)} // 2 already stored
	if n := race("many", total, func(i int) string { return fmt.Sprintf("203.0.113.%d", i) }); n != 12 {
		t.Fatalf("new addresses, room for 7 clients: %d registered, want each", n)
	}
	if n := count(); n != 7 {
		t.Fatalf("%d clients left, want 7: %v", n, left)
	}
	for _, id := range slices.Clone(left) { // each in use: it holds a code
		must(t, s.CreateOAuthCode(ctx, &switchboard.OAuthCode{Hash: "code-" + id, ClientID: id, Target: switchboard.OAuthTarget{AccountID: "acct"},
			CreatedAt: now, ExpiresAt: now.Add(5 * time.Minute)}))
	}
	if n := race("full", total, func(i int) string { return fmt.Sprintf("192.0.2.%d", i) }); n != 0 || count() != 7 {
		t.Fatalf("every client in use: %d registered, %d clients left", n, count())
	}
}

// testOAuthCodeOnce: a code is taken once, as stored, then answers
// ECONFLICT; expired codes, used or not, are swept.
func testOAuthCodeOnce(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	c := &switchboard.OAuthCode{Hash: "h1", ClientID: "c1", RedirectURI: "http://127.0.0.1:5555/cb", Challenge: "ch",
		Resource: "https://sb.example/mcp", Target: switchboard.OAuthTarget{AccountID: "acct", Agents: []string{"g1", "g2"}},
		Label: "mcp-claude", CreatedAt: now, ExpiresAt: now.Add(5 * time.Minute), ClientName: "Claude"}
	must(t, s.CreateOAuthCode(ctx, c))
	got, err := s.TakeOAuthCode(ctx, "h1")
	must(t, err)
	if got.ClientID != "c1" || got.Challenge != "ch" || got.Resource != c.Resource || got.Target.AccountID != "acct" ||
		len(got.Target.Agents) != 2 || got.Label != "mcp-claude" || !got.ExpiresAt.Equal(c.ExpiresAt) || got.ClientName != "Claude" {
		t.Fatalf("taken %+v", got)
	}
	again, err := s.TakeOAuthCode(ctx, "h1") // a replay: the code as it was, with a conflict
	wantCode(t, err, switchboard.ECONFLICT)
	if again == nil || again.Hash != "h1" || again.ClientID != "c1" {
		t.Fatalf("a code taken again: %+v", again)
	}
	_, err = s.TakeOAuthCode(ctx, "unknown")
	wantCode(t, err, switchboard.ENOTFOUND)

	old := *c
	old.Hash, old.ExpiresAt = "h2", now.Add(-time.Minute)
	must(t, s.CreateOAuthCode(ctx, &old))
	n, err := s.DeleteOAuthCodes(ctx, now)
	must(t, err)
	if n != 1 {
		t.Fatalf("swept %d codes, want 1", n)
	}
}

// testOAuthCodeReplay: the grant issued from a code is found by the
// code, and deleted by it once the code is presented again; a grant of a
// code presented again before the grant was stored is refused; of four
// takes of one code at once, one takes it.
func testOAuthCodeReplay(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "helper")
	now := time.Now().UTC().Truncate(time.Millisecond)
	code := func(hash string) {
		must(t, s.CreateOAuthCode(ctx, &switchboard.OAuthCode{Hash: hash, ClientID: "c1", Target: switchboard.OAuthTarget{AccountID: acct.ID, AgentID: g.ID},
			Label: "mcp-claude", CreatedAt: now, ExpiresAt: now.Add(5 * time.Minute)}))
	}
	grant := func(n, codeHash string) *switchboard.OAuthGrant {
		return &switchboard.OAuthGrant{RefreshHash: "r" + n, AccessHash: "a" + n, ClientID: "c1", CodeHash: codeHash,
			Target: switchboard.OAuthTarget{AccountID: acct.ID, AgentID: g.ID}, Label: "mcp-claude-" + n, CreatedAt: now}
	}

	code("k1")
	_, err := s.TakeOAuthCode(ctx, "k1")
	must(t, err)
	must(t, s.CreateOAuthGrant(ctx, grant("1", "k1")))
	must(t, s.CreateOAuthGrant(ctx, grant("0", ""))) // a grant of no recorded code
	list, err := s.FindOAuthGrants(ctx, switchboard.OAuthGrantFilter{AccountID: &acct.ID})
	must(t, err)
	if len(list) != 2 || list[0].CodeHash+list[1].CodeHash != "k1" {
		t.Fatalf("grants %+v", list)
	}
	_, err = s.TakeOAuthCode(ctx, "k1")
	wantCode(t, err, switchboard.ECONFLICT)
	ended, err := s.DeleteOAuthGrantOfCode(ctx, "k1")
	must(t, err)
	if ended.RefreshHash != "r1" || ended.Label != "mcp-claude-1" {
		t.Fatalf("the grant of the code: %+v", ended)
	}
	_, err = s.DeleteOAuthGrantOfCode(ctx, "k1")
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = s.DeleteOAuthGrantOfCode(ctx, "")
	wantCode(t, err, switchboard.ENOTFOUND)
	_, err = s.DeleteOAuthGrant(ctx, "r0") // the grant of no code stays
	must(t, err)

	// Presented again before the first use's grant is stored.
	code("k2")
	_, err = s.TakeOAuthCode(ctx, "k2")
	must(t, err)
	_, err = s.TakeOAuthCode(ctx, "k2")
	wantCode(t, err, switchboard.ECONFLICT)
	wantCode(t, s.CreateOAuthGrant(ctx, grant("2", "k2")), switchboard.ECONFLICT)
	_, err = s.DeleteOAuthGrant(ctx, "r2")
	wantCode(t, err, switchboard.ENOTFOUND)

	code("k3")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := s.TakeOAuthCode(ctx, "k3")
			errs <- err
		}()
	}
	took := 0
	for range 4 {
		switch err := <-errs; switchboard.ErrorCode(err) {
		case "":
			took++
		case switchboard.ECONFLICT:
		default:
			t.Fatalf("a take that lost: %v, want a conflict", err)
		}
	}
	if took != 1 {
		t.Fatalf("%d takes of one code won, want 1", took)
	}
}

// testOAuthGrants: a refresh rotates once (compare-and-swap, also under
// concurrency); a grant is deleted by either hash; deleting its agent
// deletes it.
func testOAuthGrants(t *testing.T, s Store) {
	ctx := context.Background()
	acct := newAccount(t, s, "alice")
	g := newAgent(t, s, acct, "helper")
	now := time.Now().UTC().Truncate(time.Millisecond)
	gr := &switchboard.OAuthGrant{RefreshHash: "r1", AccessHash: "a1", ClientID: "c1",
		Target: switchboard.OAuthTarget{AccountID: acct.ID, AgentID: g.ID}, Label: "mcp-claude", CreatedAt: now}
	must(t, s.CreateOAuthGrant(ctx, gr))
	wantCode(t, s.CreateOAuthGrant(ctx, gr), switchboard.ECONFLICT)

	done := make(chan error, 4)
	for i := range 4 {
		go func() {
			_, err := s.RotateOAuthGrant(ctx, "r1", fmt.Sprintf("r2-%d", i), fmt.Sprintf("a2-%d", i))
			done <- err
		}()
	}
	won := 0
	for range 4 {
		if err := <-done; err == nil {
			won++
		} else if code := switchboard.ErrorCode(err); code != switchboard.ENOTFOUND && code != switchboard.ECONFLICT {
			t.Fatalf("a rotation that lost: %v, want not found or conflict", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d rotations of one refresh token won, want 1", won)
	}
	// r1 used again after its rotation: the grant it was, unchanged.
	used, err := s.RotateOAuthGrant(ctx, "r1", "r3", "a3")
	wantCode(t, err, switchboard.ECONFLICT)
	if used == nil || !strings.HasPrefix(used.RefreshHash, "r2-") || used.Label != "mcp-claude" || used.RotatedAt.IsZero() {
		t.Fatalf("the grant of a refresh hash used again: %+v", used)
	}
	current := used.RefreshHash
	if _, err := s.RotateOAuthGrant(ctx, current, "r4", "a4"); err != nil {
		t.Fatal(err)
	}
	_, err = s.RotateOAuthGrant(ctx, "r1", "r5", "a5") // two rotations ago: no longer known
	wantCode(t, err, switchboard.ENOTFOUND)
	if used, err := s.RotateOAuthGrant(ctx, current, "r5", "a5"); switchboard.ErrorCode(err) != switchboard.ECONFLICT || used.RefreshHash != "r4" {
		t.Fatalf("the refresh hash before the last used again: %+v, %v", used, err)
	}
	if _, err := s.RotateOAuthGrant(ctx, "", "r5", "a5"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("an empty refresh hash: %v", err)
	}

	other := &switchboard.OAuthGrant{RefreshHash: "r9", AccessHash: "a9", ClientID: "c1",
		Target: switchboard.OAuthTarget{AccountID: acct.ID, AgentID: g.ID}, Label: "mcp-claude-2", CreatedAt: now}
	must(t, s.CreateOAuthGrant(ctx, other))
	del, err := s.DeleteOAuthGrant(ctx, "a9")
	must(t, err)
	if del.RefreshHash != "r9" || del.Label != "mcp-claude-2" || del.Target.AgentID != g.ID {
		t.Fatalf("deleted %+v", del)
	}
	_, err = s.DeleteOAuthGrant(ctx, "r9")
	wantCode(t, err, switchboard.ENOTFOUND)

	must(t, s.DeleteAgent(ctx, g.ID))
	_, err = s.DeleteOAuthGrant(ctx, "r4")
	wantCode(t, err, switchboard.ENOTFOUND)
}

// testOAuthGrantList: grants are listed oldest first, all or those of one
// account, with their client's id (a metadata document's URL fits) and
// name as stored.
func testOAuthGrantList(t *testing.T, s Store) {
	ctx := context.Background()
	alice, bob := newAccount(t, s, "alice"), newAccount(t, s, "bob")
	ga, gb := newAgent(t, s, alice, "helper"), newAgent(t, s, bob, "desk")
	now := time.Now().UTC().Truncate(time.Millisecond)
	docID := "https://client.example/" + strings.Repeat("p", 480) + "/client.json"
	for _, gr := range []*switchboard.OAuthGrant{
		{RefreshHash: "lr2", AccessHash: "la2", ClientID: docID, ClientName: "Doc client",
			Target: switchboard.OAuthTarget{AccountID: alice.ID, AgentID: ga.ID}, Label: "mcp-doc-client", CreatedAt: now.Add(time.Second)},
		{RefreshHash: "lr1", AccessHash: "la1", ClientID: "sbc_1", ClientName: "Claude",
			Target: switchboard.OAuthTarget{AccountID: alice.ID, Agents: []string{ga.ID}}, Label: "mcp-claude", CreatedAt: now},
		{RefreshHash: "lr3", AccessHash: "la3", ClientID: "sbc_2",
			Target: switchboard.OAuthTarget{AccountID: bob.ID, AgentID: gb.ID}, Label: "mcp-other", CreatedAt: now},
	} {
		must(t, s.CreateOAuthGrant(ctx, gr))
	}
	got, err := s.FindOAuthGrants(ctx, switchboard.OAuthGrantFilter{AccountID: &alice.ID})
	must(t, err)
	if len(got) != 2 || got[0].AccessHash != "la1" || got[0].ClientName != "Claude" || len(got[0].Target.Agents) != 1 ||
		got[1].ClientID != docID || got[1].ClientName != "Doc client" || got[1].Target.AgentID != ga.ID || !got[1].CreatedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("alice's grants: %+v", got)
	}
	all, err := s.FindOAuthGrants(ctx, switchboard.OAuthGrantFilter{})
	must(t, err)
	n := 0
	for _, g := range all {
		if strings.HasPrefix(g.AccessHash, "la") {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d of the 3 grants listed without a filter", n)
	}
}
