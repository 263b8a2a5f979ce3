package switchboard

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// FuzzNormalizeHandle checks that every accepted handle is a DNS label and
// that normalising is idempotent.
func FuzzNormalizeHandle(f *testing.F) {
	for _, s := range []string{"alice", "Alice", "a-b", "-a", "a-", "", "a b", "ünï", "01234567-89ab-cdef-0123-456789abcdef", " x "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := NormalizeHandle(s)
		if err != nil {
			if c := ErrorCode(err); c != EINVALID && c != EUNPROCESSABLE {
				t.Fatalf("error %v is not EINVALID nor EUNPROCESSABLE", err)
			}
			if (ErrorCode(err) == EUNPROCESSABLE) != (CheckName("handle", strings.ToLower(strings.TrimSpace(s))) != nil) {
				t.Fatalf("%q: EUNPROCESSABLE is for what CheckName refuses: %v", s, err)
			}
			return
		}
		if len(h) == 0 || len(h) > MaxHandleLen || h[0] == '-' || h[len(h)-1] == '-' || IsUUID(h) {
			t.Fatalf("accepted %q as %q", s, h)
		}
		for _, c := range []byte(h) {
			if !(('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '-') {
				t.Fatalf("accepted %q with byte %q", h, c)
			}
		}
		if again, err := NormalizeHandle(h); err != nil || again != h {
			t.Fatalf("not idempotent: %q -> %q (%v)", h, again, err)
		}
	})
}

// FuzzParseState checks that a parsed state prints back to a form that
// parses to the same state.
func FuzzParseState(f *testing.F) {
	for _, s := range []string{"completed", "TASK_STATE_INPUT_REQUIRED", "input-required", "auth_required", "bogus", "", "TASK_STATE_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, ok := ParseState(s)
		if !ok {
			if st != a2a.TaskStateUnspecified {
				t.Fatalf("failed parse returned %q", st)
			}
			return
		}
		if again, ok := ParseState(ShortState(st)); !ok || again != st {
			t.Fatalf("%q -> %q -> %q", s, ShortState(st), again)
		}
	})
}
