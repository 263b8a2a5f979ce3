package audit_test

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
)

var sinceNow = time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)

// TestParseSince: a time, a duration or days ago; anything else EINVALID.
func TestParseSince(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-05-01T10:00:00Z":      time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		"2026-05-01T12:00:00+02:00": time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		"36h":                       sinceNow.Add(-36 * time.Hour),
		"7d":                        sinceNow.Add(-7 * 24 * time.Hour),
		" 90m ":                     sinceNow.Add(-90 * time.Minute),
	} {
		got, err := audit.ParseSince(in, sinceNow)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "-1h", "-3d", "1.5d", "99999999d", "2999-01-01T00:00:00Z", "1900-01-01T00:00:00Z"} {
		if _, err := audit.ParseSince(in, sinceNow); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("ParseSince(%q) = %v, want EINVALID", in, err)
		}
	}
}

// FuzzParseSince: any text is a time no later than now, or EINVALID.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"2026-05-01T10:00:00Z", "36h", "7d", "", "-1h", "1e9h", "0d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := audit.ParseSince(s, sinceNow)
		if err != nil {
			if switchboard.ErrorCode(err) != switchboard.EINVALID {
				t.Fatalf("ParseSince(%q): %v, want EINVALID", s, err)
			}
			return
		}
		if _, terr := time.Parse(time.RFC3339Nano, s); terr != nil && got.After(sinceNow) {
			t.Fatalf("ParseSince(%q) = %v, after now", s, got)
		}
	})
}
