package sqlstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// testFrontRecord: a front records its tasks unless set otherwise; the
// setting is kept, refused for a value that is not a mode or an agent
// without a front, and carried by an export.
func testFrontRecord(t *testing.T, open func(t *testing.T) *sqlstore.DB) {
	ctx := context.Background()
	db := open(t)
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "owner", Role: switchboard.RoleOwner}
	must(t, db.CreateAccount(ctx, acct))
	g := &switchboard.Agent{ID: switchboard.NewID(), AccountID: acct.ID, Handle: "pass", Mode: switchboard.ModeFront, AcceptsTasks: true}
	must(t, db.CreateAgent(ctx, g))
	must(t, db.PutFront(ctx, g.ID, "https://up.example/a2a", ""))
	f, err := db.FindFront(ctx, g.ID)
	must(t, err)
	if f.Record != switchboard.FrontRecordTask || f.PassThrough() {
		t.Fatalf("a new front records %q, want %q", f.Record, switchboard.FrontRecordTask)
	}
	was := f.UpdatedAt
	must(t, db.SetFrontRecord(ctx, g.ID, switchboard.FrontRecordNone))
	f, err = db.FindFront(ctx, g.ID)
	must(t, err)
	if !f.PassThrough() || f.UpdatedAt.Before(was) {
		t.Fatalf("after SetFrontRecord none: %q at %v", f.Record, f.UpdatedAt)
	}
	must(t, db.PutFront(ctx, g.ID, "https://up.example/other", ""))
	if f, _ := db.FindFront(ctx, g.ID); !f.PassThrough() {
		t.Fatal("a new upstream lost the record setting")
	}
	if err := db.SetFrontRecord(ctx, g.ID, "some"); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("record %q: got %v, want invalid", "some", err)
	}
	if err := db.SetFrontRecord(ctx, switchboard.NewID(), switchboard.FrontRecordNone); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("an agent without a front: got %v, want not found", err)
	}

	var buf bytes.Buffer
	_, err = db.Export(ctx, &buf)
	must(t, err)
	dst := open(t)
	_, err = dst.Import(ctx, &buf, sqlstore.ImportOptions{})
	must(t, err)
	if f, err := dst.FindFront(ctx, g.ID); err != nil || !f.PassThrough() {
		t.Fatalf("imported: %+v, %v; want record none", f, err)
	}
}

func TestSQLiteFrontRecord(t *testing.T) {
	testFrontRecord(t, func(t *testing.T) *sqlstore.DB { return MustOpenSQLite(t) })
}

func TestPostgresFrontRecord(t *testing.T) {
	testFrontRecord(t, func(t *testing.T) *sqlstore.DB { return MustOpenPostgres(t) })
}
