package audit

import (
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// ParseSince reads the start of an audit listing (GET /audit?since=,
// switchboard audit --since): a time in RFC 3339 ("2026-05-01T10:00:00Z"),
// or how long ago, as a Go duration ("36h", "90m") or in days ("7d"),
// counted back from now. Anything else, a negative span, and a time before
// 1970 or after 2200, is EINVALID.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	bad := switchboard.Errorf(switchboard.EINVALID, "since: want a time (RFC 3339) or how long ago (36h, 7d)")
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if t.Year() < 1970 || t.Year() > 2200 { // the store counts nanoseconds from 1970, to 2262
			return time.Time{}, bad
		}
		return t.UTC(), nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*366 {
			return time.Time{}, bad
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d < 0 || d > 100*366*24*time.Hour {
			return time.Time{}, bad
		}
	}
	return now.Add(-d).UTC(), nil
}
