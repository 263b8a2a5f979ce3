package sqlstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// A front's URLs with a key in their query: the key must never be kept
// as it is once the store seals.
const (
	upstreamWithKey = "https://up.example/a2a?api_key=upstream-query-secret-0123"
	cardURLWithKey  = "https://up.example/card.json?api_key=card-query-secret-0123"
)

// exportHolds reports whether an export of db holds s as it is.
func exportHolds(t *testing.T, db *sqlstore.DB, s string) bool {
	t.Helper()
	var buf bytes.Buffer
	_, err := db.Export(context.Background(), &buf)
	must(t, err)
	return strings.Contains(buf.String(), s)
}

// findFront fails the test unless the agent's front reads back with the
// URLs given.
func findFront(t *testing.T, db *sqlstore.DB, agentID, upstream, cardURL string) *switchboard.Front {
	t.Helper()
	f, err := db.FindFront(context.Background(), agentID)
	must(t, err)
	if f.Upstream != upstream || f.CardURL != cardURL {
		t.Fatalf("front read back as %q, %q; want %q, %q", f.Upstream, f.CardURL, upstream, cardURL)
	}
	return f
}

// testFrontURLsAtRest: a front's upstream and card URLs are sealed as
// they are written, and those kept before (unsealed) stay readable and are
// sealed by ResealSecrets; the last failure stays while the upstream
// does; an export carries them sealed, and its import reads them back.
func testFrontURLsAtRest(t *testing.T, open func(t *testing.T) *sqlstore.DB) {
	ctx := context.Background()
	db := open(t)
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	newFront := func(handle string) *switchboard.Agent {
		g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: handle, Mode: switchboard.ModeFront, AcceptsTasks: true}
		must(t, db.CreateAgent(ctx, g))
		must(t, db.PutFront(ctx, g.ID, upstreamWithKey, cardURLWithKey))
		return g
	}
	// Kept before the URLs were sealed: as they are.
	old := newFront("old")
	if !exportHolds(t, db, "upstream-query-secret-0123") {
		t.Fatal("without a sealer, the upstream is not kept as it is")
	}

	// With a key: read as before, sealed again at once.
	key := seal.NewKey()
	keys, _ := seal.NewKeyring(key)
	db.Secrets = keys
	findFront(t, db, old.ID, upstreamWithKey, cardURLWithKey)
	n, err := db.ResealSecrets(ctx)
	if err != nil || n != 2 { // the upstream and the card URL
		t.Fatalf("ResealSecrets = %d, %v; want 2", n, err)
	}
	for _, s := range []string{"upstream-query-secret-0123", "card-query-secret-0123", "up.example"} {
		if exportHolds(t, db, s) {
			t.Fatalf("the export holds %q as it is once sealed", s)
		}
	}
	findFront(t, db, old.ID, upstreamWithKey, cardURLWithKey)

	// Written sealed; the last failure stays while the upstream does.
	g := newFront("new")
	if exportHolds(t, db, "upstream-query-secret-0123") {
		t.Fatal("a new front's upstream is kept as it is")
	}
	must(t, db.RecordFrontFailure(ctx, g.ID, &switchboard.FrontFailure{Reason: switchboard.FrontNetwork}))
	must(t, db.PutFront(ctx, g.ID, upstreamWithKey, ""))
	if f := findFront(t, db, g.ID, upstreamWithKey, ""); f.LastFailure == nil {
		t.Fatal("the same upstream again lost the last failure")
	}
	must(t, db.PutFront(ctx, g.ID, "https://other.example/a2a?api_key=x", ""))
	if f := findFront(t, db, g.ID, "https://other.example/a2a?api_key=x", ""); f.LastFailure != nil {
		t.Fatal("a new upstream kept the last failure")
	}

	// Export and import, under the same key.
	var buf bytes.Buffer
	_, err = db.Export(ctx, &buf)
	must(t, err)
	dst := open(t)
	dst.Secrets = keys
	_, err = dst.Import(ctx, &buf, sqlstore.ImportOptions{})
	must(t, err)
	findFront(t, dst, old.ID, upstreamWithKey, cardURLWithKey)
}

func TestSQLiteFrontURLsAtRest(t *testing.T) {
	testFrontURLsAtRest(t, func(t *testing.T) *sqlstore.DB { return MustOpenSQLite(t) })
}

func TestPostgresFrontURLsAtRest(t *testing.T) {
	testFrontURLsAtRest(t, func(t *testing.T) *sqlstore.DB { return MustOpenPostgres(t) })
}
