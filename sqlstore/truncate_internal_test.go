package sqlstore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTruncateError: a kept error is at most 500 bytes of valid UTF-8
// without NUL (PostgreSQL's text refuses both), cut at a character's
// start.
func TestTruncateError(t *testing.T) {
	for _, in := range []string{
		"bad\x00answer",
		strings.Repeat("x", 499) + "é and more",
		strings.Repeat("é", 300),
		"broken \xff\xfe utf-8",
		"short",
	} {
		got := truncateError(in)
		if len(got) > 500 || !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
			t.Errorf("truncateError(%.20q…) = %d bytes %.30q…", in, len(got), got)
		}
		if len(in) <= 500 && utf8.ValidString(in) && !strings.ContainsRune(in, 0) && got != in {
			t.Errorf("truncateError(%q) = %q, want it unchanged", in, got)
		}
	}
}
