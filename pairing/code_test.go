package pairing_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
)

func TestNormalizeUserCode(t *testing.T) {
	for in, want := range map[string]string{
		"WDJB-4827": "WDJB4827", "wdjb-4827": "WDJB4827", "wdjb 4827": "WDJB4827", " WDJB4827 ": "WDJB4827",
		"WDJB-4817": "", "WDAB-4827": "", "WDJB-482": "", "": "", "WDJB-48277": "", "ÅDJB-4827": "",
	} {
		got, ok := pairing.NormalizeUserCode(in)
		if got != want || ok != (want != "") {
			t.Errorf("NormalizeUserCode(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if got := pairing.FormatUserCode("WDJB4827"); got != "WDJB-4827" {
		t.Errorf("FormatUserCode = %q", got)
	}
}

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"Barry Bot":                 "Barry Bot",
		"  Barry \t\n Bot  ":        "Barry Bot",
		"Barry\u202eBot\u200b":      "BarryBot",
		"a\x00b\x1bc\x7f":           "abc",
		strings.Repeat("x", 100):    strings.Repeat("x", 64),
		strings.Repeat("é", 70):     strings.Repeat("é", 64),
		"<script>alert(1)</script>": "<script>alert(1)</script>", // escaped where shown, not here
		"\xff\xfeBarry":             "Barry",
		strings.Repeat("ab ", 40):   strings.TrimSpace(strings.Repeat("ab ", 22))[:64],
		"":                          "",
	} {
		if got := pairing.CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckCardURL(t *testing.T) {
	for in, ok := range map[string]bool{
		"": true, "https://barry.example/.well-known/agent-card.json": true, "https://barry.ts.net/card": true,
		"http://barry.example/card": false, "https://u:p@barry.example/": false, "https://": false, "barry.example": false,
		"https://barry.example/a b": false, "javascript:alert(1)": false, "https://" + strings.Repeat("a", 300): false,
	} {
		if err := pairing.CheckCardURL(in); (err == nil) != ok {
			t.Errorf("CheckCardURL(%q) = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestLabelBase(t *testing.T) {
	for _, c := range []struct{ name, id, want string }{
		{"Barry Bot", "", "Barry-Bot"}, {"", "barry-cli", "barry-cli"}, {"!!!", "", "paired-agent"},
		{"Ünïcode", "", "n-code"}, {strings.Repeat("b", 40), "", strings.Repeat("b", 24)}, {"", "", "paired-agent"},
		{"  ", "x y", "x-y"},
	} {
		if got := pairing.LabelBase(c.name, c.id); got != c.want {
			t.Errorf("LabelBase(%q, %q) = %q, want %q", c.name, c.id, got, c.want)
		}
	}
}

// FuzzPairingText: whatever a client sends, a cleaned claim is short and
// printable, a derived label is a valid label, and a user code reads back
// as itself.
func FuzzPairingText(f *testing.F) {
	for _, s := range []string{"Barry Bot", "wdjb-4827", "\u202e\u200b", "https://barry.example/card", "\xff", strings.Repeat("é", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := pairing.CleanText(s)
		if utf8.RuneCountInString(c) > pairing.MaxClientText || !utf8.ValidString(c) || strings.ContainsAny(c, "\n\r\t\x00\u202e") {
			t.Fatalf("CleanText(%q) = %q", s, c)
		}
		if l := pairing.LabelBase(s, s); !switchboard.ValidLabel(l) {
			t.Fatalf("LabelBase(%q) = %q, not a label", s, l)
		}
		if code, ok := pairing.NormalizeUserCode(s); ok {
			if again, ok := pairing.NormalizeUserCode(pairing.FormatUserCode(code)); !ok || again != code {
				t.Fatalf("user code %q does not read back: %q", code, again)
			}
		}
		if pairing.CheckCardURL(s) == nil && s != "" && (!strings.HasPrefix(s, "https://") || len(s) > pairing.MaxCardURL) {
			t.Fatalf("CheckCardURL accepted %q", s)
		}
	})
}
