package switchboard

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzCheckText checks CheckName and CheckDescription against a plain
// statement of the rule: a name is refused exactly when it is not UTF-8
// or holds a control character (C0, DEL, C1: unicode.IsControl) or a
// bidirectional embedding, override or isolate (U+202A–U+202E,
// U+2066–U+2069); a description likewise, but for tab and line feed. A
// refusal is EUNPROCESSABLE, names the field first, and can itself be
// shown.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"alice", "", "Alice Smith", "ünïcødé", "日本語のエージェント", "a\x00b", "\x1b[31mred",
		"evil\u202egnp.exe", "\u2066isolated\u2069", "\u202a\u202b\u202c\u202d", "tab\there", "two\nlines", "cr\rlf\r\n",
		"\u0085next line", "del\x7f", "\u009fapc", "\xff\xfe", "half \xe2\x80", "\u200f mark", "\u2028 separator", "\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		badName, badDesc := !utf8.ValidString(s), !utf8.ValidString(s)
		for _, r := range s {
			bidi := (0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069)
			if bidi || unicode.IsControl(r) {
				badName = true
				if r != '\t' && r != '\n' {
					badDesc = true
				}
			}
		}
		for _, c := range []struct {
			field string
			err   error
			bad   bool
		}{{"name", CheckName("name", s), badName}, {"description", CheckDescription("description", s), badDesc}} {
			if (c.err != nil) != c.bad {
				t.Fatalf("%s %q: refused %v, want %v (%v)", c.field, s, c.err != nil, c.bad, c.err)
			}
			if c.err == nil {
				continue
			}
			msg := ErrorMessage(c.err)
			if ErrorCode(c.err) != EUNPROCESSABLE || !strings.HasPrefix(msg, c.field+" ") {
				t.Fatalf("%s %q: %v, want EUNPROCESSABLE naming the field", c.field, s, c.err)
			}
			if err := CheckName("message", msg); err != nil {
				t.Fatalf("%s %q: the message %q cannot be shown: %v", c.field, s, msg, err)
			}
		}
		// Stripping leaves what the check takes, and changes nothing it takes.
		for _, c := range []struct {
			field        string
			strip, check func(string) string
			bad          bool
		}{
			{"name", StripName, func(s string) string { return errText(CheckName("name", s)) }, badName},
			{"description", StripDescription, func(s string) string { return errText(CheckDescription("description", s)) }, badDesc},
		} {
			got := c.strip(s)
			if e := c.check(got); e != "" {
				t.Fatalf("%s %q stripped is %q, still refused: %s", c.field, s, got, e)
			}
			if !c.bad && got != s {
				t.Fatalf("%s %q stripped is %q, want it unchanged", c.field, s, got)
			}
		}
	})
}

// errText is err's text, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
