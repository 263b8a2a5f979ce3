package switchboard_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

// TestCheckText: what a name and a description may not hold, and what
// the refusal says.
func TestCheckText(t *testing.T) {
	for name, c := range map[string]struct {
		in        string
		name      string // CheckName's message, "" for none
		multiline string // CheckDescription's
	}{
		"OK":           {in: "Alice's agent ü 日本"},
		"OKLines":      {in: "one\n\ttwo", name: "f may not hold a control character (U+000A, character 4)"},
		"NUL":          {in: "ab\x00", name: "f may not hold a NUL (U+0000, character 3)", multiline: "f may not hold a NUL (U+0000, character 3)"},
		"Escape":       {in: "\x1b[2J", name: "f may not hold a control character (U+001B, character 1)", multiline: "f may not hold a control character (U+001B, character 1)"},
		"CarriageRet":  {in: "a\r\n", name: "f may not hold a control character (U+000D, character 2)", multiline: "f may not hold a control character (U+000D, character 2)"},
		"DEL":          {in: "\x7f", name: "f may not hold a control character (U+007F, character 1)", multiline: "f may not hold a control character (U+007F, character 1)"},
		"C1":           {in: "ü\u0085", name: "f may not hold a control character (U+0085, character 2)", multiline: "f may not hold a control character (U+0085, character 2)"},
		"Override":     {in: "evil\u202egnp.exe", name: "f may not hold a bidirectional formatting character (U+202E, character 5)", multiline: "f may not hold a bidirectional formatting character (U+202E, character 5)"},
		"Embedding":    {in: "\u202ax", name: "f may not hold a bidirectional formatting character (U+202A, character 1)", multiline: "f may not hold a bidirectional formatting character (U+202A, character 1)"},
		"Isolate":      {in: "x\u2069", name: "f may not hold a bidirectional formatting character (U+2069, character 2)", multiline: "f may not hold a bidirectional formatting character (U+2069, character 2)"},
		"NotUTF8":      {in: "ab\xff", name: "f is not UTF-8 text (byte 2)", multiline: "f is not UTF-8 text (byte 2)"},
		"MarksAllowed": {in: "\u200f\u061c\u2028\ufffd"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, got := range []struct {
				err  error
				want string
			}{{switchboard.CheckName("f", c.in), c.name}, {switchboard.CheckDescription("f", c.in), c.multiline}} {
				if got.want == "" {
					if got.err != nil {
						t.Fatalf("%q refused: %v", c.in, got.err)
					}
					continue
				}
				if switchboard.ErrorCode(got.err) != switchboard.EUNPROCESSABLE || switchboard.ErrorMessage(got.err) != got.want {
					t.Fatalf("%q: %v, want EUNPROCESSABLE %q", c.in, got.err, got.want)
				}
			}
		})
	}
}

// TestCheckSkill: each part of a skill is checked, and named.
func TestCheckSkill(t *testing.T) {
	ok := a2a.AgentSkill{ID: "code", Name: "Code", Description: "Writes\ncode", Tags: []string{"go"}, Examples: []string{"fix\tthis"}}
	if err := switchboard.CheckSkill("skills[0]", &ok); err != nil {
		t.Fatal(err)
	}
	for want, sk := range map[string]a2a.AgentSkill{
		"skills[0].id":          {ID: "a\x00"},
		"skills[0].name":        {Name: "\u202e"},
		"skills[0].description": {Description: "\r"},
		"skills[0].tags[1]":     {Tags: []string{"go", "\u2066"}},
		"skills[0].examples[0]": {Examples: []string{"\x1b"}},
	} {
		err := switchboard.CheckSkill("skills[0]", &sk)
		if switchboard.ErrorCode(err) != switchboard.EUNPROCESSABLE || !strings.HasPrefix(switchboard.ErrorMessage(err), want+" ") {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// TestTruncate: a cut falls at the start of a character, never inside
// one, and is marked.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 4, "hell…"},
		{"héllo", 2, "h…"}, // é is two bytes: not split
		{"héllo", 3, "hé…"},
		{"日本", 4, "日…"},
		{"日本", 2, "…"},
		{"", 0, ""},
	} {
		got := switchboard.Truncate(tc.s, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
