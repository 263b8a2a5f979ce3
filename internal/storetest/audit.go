package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var auditTests = map[string]func(*testing.T, Store){
	"AuditFindFiltersAndPages": testAuditFind,
	"AuditDeleteOld":           testAuditDelete,
}

// auditEntry returns an entry of account acct at at, by actor, on target.
func auditEntry(acct string, at time.Time, actor, target string) *switchboard.AuditEntry {
	return &switchboard.AuditEntry{ID: switchboard.NewID(), At: at, AccountID: acct,
		ActorKind: switchboard.AuditOwner, ActorID: actor, Action: switchboard.AuditTokenIssue,
		TargetKind: "agent", TargetID: target, Outcome: switchboard.AuditOK, ClientAddr: "192.0.2.1", Detail: "peer token ci"}
}

// testAuditFind: entries come back newest first, whole; an account's
// filter keeps only its entries; actor and target match an id or a kind;
// since bounds by time; pages follow one another by cursor to the end
// without repeating or skipping an entry (entries at the same time
// included); a cursor the store did not give is EINVALID.
func testAuditFind(t *testing.T, s Store) {
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var all []*switchboard.AuditEntry
	for i := range 7 {
		acct := "acct-a"
		if i%2 == 1 {
			acct = "acct-b"
		}
		at := base.Add(time.Duration(i/2) * time.Minute) // pairs share a time
		e := auditEntry(acct, at, fmt.Sprintf("actor-%d", i%3), fmt.Sprintf("target-%d", i))
		must(t, s.CreateAuditEntry(ctx, e))
		all = append(all, e)
	}
	got, next, err := s.FindAuditEntries(ctx, switchboard.AuditFilter{})
	must(t, err)
	if len(got) != 7 || next != "" {
		t.Fatalf("all: %d entries, next %q", len(got), next)
	}
	for i := 1; i < len(got); i++ {
		if got[i].At.After(got[i-1].At) {
			t.Fatalf("not newest first: %v after %v", got[i].At, got[i-1].At)
		}
	}
	want := all[6]
	if g := got[0]; g.ID != want.ID || !g.At.Equal(want.At) || g.AccountID != want.AccountID || g.ActorKind != want.ActorKind ||
		g.ActorID != want.ActorID || g.Action != want.Action || g.TargetKind != want.TargetKind || g.TargetID != want.TargetID ||
		g.Outcome != want.Outcome || g.ClientAddr != want.ClientAddr || g.Detail != want.Detail {
		t.Fatalf("newest = %+v, want %+v", g, want)
	}

	b := "acct-b"
	got, _, err = s.FindAuditEntries(ctx, switchboard.AuditFilter{AccountID: &b})
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("account b: %d entries, want 3", len(got))
	}
	for _, e := range got {
		if e.AccountID != b {
			t.Fatalf("account b's listing has %+v", e)
		}
	}
	got, _, err = s.FindAuditEntries(ctx, switchboard.AuditFilter{Actor: "actor-1"})
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("actor-1: %d entries, want 2", len(got))
	}
	got, _, err = s.FindAuditEntries(ctx, switchboard.AuditFilter{Actor: string(switchboard.AuditOwner), Target: "target-3"})
	must(t, err)
	if len(got) != 1 || got[0].TargetID != "target-3" {
		t.Fatalf("owner on target-3: %+v", got)
	}
	got, _, err = s.FindAuditEntries(ctx, switchboard.AuditFilter{Target: "agent"})
	must(t, err)
	if len(got) != 7 {
		t.Fatalf("target kind agent: %d entries, want 7", len(got))
	}
	got, _, err = s.FindAuditEntries(ctx, switchboard.AuditFilter{Since: base.Add(2 * time.Minute)})
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("since: %d entries, want 3", len(got))
	}

	seen := map[string]bool{}
	f := switchboard.AuditFilter{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("paging does not end")
		}
		got, next, err := s.FindAuditEntries(ctx, f)
		must(t, err)
		for _, e := range got {
			if seen[e.ID] {
				t.Fatalf("entry %s on two pages", e.ID)
			}
			seen[e.ID] = true
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if len(seen) != 7 {
		t.Fatalf("paging saw %d entries, want 7", len(seen))
	}
	_, _, err = s.FindAuditEntries(ctx, switchboard.AuditFilter{Cursor: "not a cursor"})
	wantCode(t, err, switchboard.EINVALID)
}

// testAuditDelete: retention deletes the entries older than its bound and
// keeps the rest.
func testAuditDelete(t *testing.T, s Store) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	old, kept := auditEntry("acct-a", now.Add(-91*24*time.Hour), "a", "t"), auditEntry("acct-a", now.Add(-time.Hour), "a", "t")
	must(t, s.CreateAuditEntry(ctx, old))
	must(t, s.CreateAuditEntry(ctx, kept))
	n, err := s.DeleteAuditEntries(ctx, now.Add(-90*24*time.Hour))
	must(t, err)
	if n != 1 {
		t.Fatalf("deleted %d, want 1", n)
	}
	got, _, err := s.FindAuditEntries(ctx, switchboard.AuditFilter{})
	must(t, err)
	if len(got) != 1 || got[0].ID != kept.ID {
		t.Fatalf("left %+v, want only %s", got, kept.ID)
	}
}
