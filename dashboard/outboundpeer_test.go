package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestSyncedAliases: an agent's page lists its synced aliases (alias, URL,
// whether the token is kept, when synced), never a token; one whose token
// no longer opens says how to sync it again; Remove deletes one with the
// form's CSRF token from the console's origin only; another owner sees
// none and removes none (404).
func TestSyncedAliases(t *testing.T) {
	ring, err := seal.NewKeyring(seal.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, withSecrets(ring))
	alice, token := h.account("alice", switchboard.RoleOwner)
	_, bobToken := h.account("bob", switchboard.RoleOwner)
	g := h.agent(alice, "helper", "Helper", "")
	ctx := context.Background()
	if _, _, err := h.aliases.Put(ctx, g.ID, "bob", "https://bob.example/a/bob", "sbp_secret-of-bob"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.aliases.Put(ctx, g.ID, "markup", `https://markup.example/a/"><b>x</b>`, "sbp_secret-of-markup"); err != nil {
		t.Fatal(err)
	}
	putWithOtherKeys(t, h, &switchboard.OutboundPeer{AgentID: g.ID, Alias: "lost", URL: "https://lost.example/a/x", Token: "sbp_secret-lost"})

	c := h.client()
	c.signIn(token)
	res, page := c.get("/dashboard/agents/helper")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("agent page: %s", res.Status)
	}
	for _, want := range []string{
		"<h2>Synced aliases</h2>",
		`<tr data-alias="bob"><td>bob</td><td><code>https://bob.example/a/bob</code></td><td>kept</td>`,
		`<code>https://markup.example/a/&#34;&gt;&lt;b&gt;x&lt;/b&gt;</code>`,
		`token lost (the server's keys changed): run <code>switchboard peers sync --agent helper lost</code> again`,
		`aria-label="remove alias bob"`,
		"from the CLI's peers.json, not here: <code>switchboard peers sync --agent helper</code>",
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("the agent page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<b>x</b>") || strings.Contains(page, "sbp_secret") {
		t.Fatalf("the page shows markup or a token:\n%s", page)
	}
	csrfToken := csrf(t, page)

	// Refused: no CSRF token, another origin, another owner.
	remove := url.Values{"csrf": {csrfToken}, "alias": {"bob"}, "back": {"/dashboard/agents/helper"}}
	if res, _ := c.post("/dashboard/agents/helper/aliases/remove", url.Values{"alias": {"bob"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("remove without the CSRF token: %s", res.Status)
	}
	if res, _ := c.postFrom("https://evil.example", "/dashboard/agents/helper/aliases/remove", remove); res.StatusCode != http.StatusForbidden {
		t.Fatalf("remove from another origin: %s", res.Status)
	}
	other := h.client()
	otherPage := other.signIn(bobToken)
	if res, page := other.get("/dashboard/agents/helper"); res.StatusCode != http.StatusNotFound || strings.Contains(page, "bob.example") {
		t.Fatalf("another owner's view of the agent: %s", res.Status)
	}
	if res, _ := other.post("/dashboard/agents/helper/aliases/remove", url.Values{"csrf": {csrf(t, otherPage)}, "alias": {"bob"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another owner's remove: %s", res.Status)
	}
	if _, err := h.aliases.Find(ctx, g.ID, "bob"); err != nil {
		t.Fatalf("a refused remove removed the alias: %v", err)
	}

	// Removed: gone from the store and the page; again: said on the page.
	res, _ = c.post("/dashboard/agents/helper/aliases/remove", remove)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/agents/helper" {
		t.Fatalf("remove: %s", res.Status)
	}
	if _, err := h.aliases.Find(ctx, g.ID, "bob"); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the removed alias is still found: %v", err)
	}
	if _, page = c.get("/dashboard/agents/helper"); strings.Contains(page, `data-alias="bob"`) || !strings.Contains(page, `data-alias="lost"`) {
		t.Fatalf("after the remove:\n%s", page)
	}
	if res, page := c.post("/dashboard/agents/helper/aliases/remove", remove); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, `class="problem"`) {
		t.Fatalf("remove a missing alias: %s\n%s", res.Status, page)
	}
	if log := h.log.String(); strings.Contains(log, "sbp_secret") {
		t.Fatalf("a token in the log:\n%s", log)
	}
}

// TestSyncedAliasesOff: on a server that keeps no synced aliases the page
// has no such section and the form answers 404.
func TestSyncedAliasesOff(t *testing.T) {
	h := newHarness(t, withoutAliases())
	alice, token := h.account("alice", switchboard.RoleOwner)
	h.agent(alice, "helper", "Helper", "")
	c := h.client()
	c.signIn(token)
	_, page := c.get("/dashboard/agents/helper")
	if strings.Contains(page, "Synced aliases") {
		t.Fatalf("a synced aliases section:\n%s", page)
	}
	res, _ := c.post("/dashboard/agents/helper/aliases/remove", url.Values{"csrf": {csrf(t, page)}, "alias": {"bob"}})
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("remove: %s", res.Status)
	}
}

// putWithOtherKeys keeps p in the harness's database through a second
// store whose keys are not the harness's: the harness reads its token as
// lost, as after the server's keys changed.
func putWithOtherKeys(t *testing.T, h *harness, p *switchboard.OutboundPeer) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenSQLite(ctx, h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Secrets, err = seal.NewKeyring(seal.NewKey()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutOutboundPeer(ctx, p); err != nil {
		t.Fatal(err)
	}
}
