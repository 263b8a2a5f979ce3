package sqlitetest_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
)

// Two databases from the template are migrated, and apart.
func TestPathIsMigratedAndFresh(t *testing.T) {
	a, b := sqlitetest.Open(t), sqlitetest.Open(t)
	ctx := context.Background()
	acct := &switchboard.Account{ID: switchboard.NewID(), Name: "alice"}
	if err := a.CreateAccount(ctx, acct); err != nil {
		t.Fatalf("a migrated database takes an account: %v", err)
	}
	if _, err := b.FindAccountByID(ctx, acct.ID); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
		t.Fatalf("the other database has it too: %v", err)
	}
}
