package sqlstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/storetest"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// TestImportCountsPeerUsage imports, on both engines, an export (which
// leaves the kept counts of peer usage out): the importing database counts
// them from the tasks, as the exporting one had them.
func TestImportCountsPeerUsage(t *testing.T) {
	ctx := context.Background()
	src := MustOpenSQLite(t)
	p := storetest.Populate(t, src)
	dump := mustExport(t, src)
	if bytes.Contains(dump, []byte(`"peer_usage"`)) {
		t.Fatal("the export holds peer_usage")
	}
	type key struct{ agent, peer string }
	want := map[key][2]int64{}
	for _, task := range p.Tasks {
		open, n, err := src.PeerUsage(ctx, task.AgentID, task.PeerID)
		must(t, err)
		want[key{task.AgentID, task.PeerID}] = [2]int64{int64(open), n}
	}
	for name, open := range map[string]func(testing.TB) *sqlstore.DB{"sqlite": MustOpenSQLite, "postgres": MustOpenPostgres} {
		t.Run(name, func(t *testing.T) {
			dst := open(t)
			if _, err := dst.Import(ctx, bytes.NewReader(dump), sqlstore.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			for k, w := range want {
				o, n, err := dst.PeerUsage(ctx, k.agent, k.peer)
				must(t, err)
				if got := [2]int64{int64(o), n}; got != w {
					t.Errorf("PeerUsage(%s, %s) = %v, want %v as exported", k.agent, k.peer, got, w)
				}
			}
		})
	}
}
