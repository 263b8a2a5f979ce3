package network_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
)

// TestCommunityNamesRefuseControlAndBidi: a community name with a control
// or bidirectional formatting character is EUNPROCESSABLE, naming the
// field, wherever one is given: joining, configuring, sending, the
// directory; other faults of a name stay EINVALID.
func TestCommunityNamesRefuseControlAndBidi(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	g := w.agent("member", "", "lab")
	for _, name := range []string{"lab\x00", "la\u202eb", "\u2066lab", "l\x1bab"} {
		calls := map[string]error{}
		_, calls["join"] = w.net.Join(ctx, w.owner, g, name)
		_, calls["configure"] = w.net.Configure(ctx, w.operator, &switchboard.Community{Name: name})
		_, calls["choose"] = w.choose(g, name, "")
		_, calls["normalize"] = network.NormalizeName(name)
		for call, err := range calls {
			if switchboard.ErrorCode(err) != switchboard.EUNPROCESSABLE || !strings.HasPrefix(switchboard.ErrorMessage(err), "community name ") {
				t.Errorf("%s %q: %v", call, name, err)
			}
		}
	}
	if _, err := network.NormalizeName("not a slug"); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Fatalf("a name with a space: %v", err)
	}
}
