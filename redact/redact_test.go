package redact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/redact"
)

func TestRedactSecrets(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "Authorization: Bearer abcd…"},
		{"my api_key=supersecretvalue123 ok", "my api_key=supe… ok"},
		{`{"token": "tok_0123456789abcdef"}`, `{"token": "tok_…"}`},
		{"X-Webhook-Signature: 0123456789abcdef", "X-Webhook-Signature: 0123…"},
		{"idempotency-key: 1234567890abcdef", "idempotency-key: 1234567890abcdef"},
		{"use sbp_QWERTYUIOPASDFGHJKLZXCVBNM to call", "use sbp_… to call"},
		{"see https://example.com/hooks/0123456789abcdefghij/run?token=x&a=b#frag now",
			"see https://example.com/hooks/…/run?token=…&a=…#… now"},
		{"https://user:pw@example.com/a", "https://…@example.com/a"},
		{"nothing secret here, just words", "nothing secret here, just words"},
	} {
		if got := redact.Secrets(tc.in); got != tc.want {
			t.Errorf("Secrets(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestPreview(t *testing.T) {
	long := "password: hunter2hunter2 " + strings.Repeat("word ", 200)
	p := redact.Preview(long)
	if n := utf8.RuneCountInString(p); n > redact.MaxPreview || !strings.HasSuffix(p, "…") || strings.Contains(p, "hunter2") {
		t.Fatalf("preview (%d runes): %q", n, p)
	}
	for _, in := range []string{"see https://example.com/hooks/0123456789abcdefghij/run?token=x#f", "Authorization: Bearer abcdefghijkl", long} {
		if p := redact.Preview(in); redact.Preview(p) != p {
			t.Errorf("a preview of a preview changed: %q", p)
		}
	}
	if p := redact.Preview("nul\x00in\x7fthe\u0085text\x1b"); p != "nul in the text" {
		t.Fatalf("control characters kept: %q", p)
	}
	if p := redact.Preview("two\n\nlines\t here"); p != "two lines here" {
		t.Fatalf("whitespace not collapsed: %q", p)
	}
}

// FuzzPreview checks that a preview is always valid text within the
// limit, and that a Switchboard token in peer text never survives.
func FuzzPreview(f *testing.F) {
	for _, s := range []string{"", "hello", "Authorization: Bearer sbo_abcdefghijklmnop", "https://a.example/0123456789abcdef?x=1",
		"\xff\xfe broken utf8 sbp_0123456789abcdefgh", strings.Repeat("é", 400), "ZZZZZZZZ", "http://@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		secret := "sbp_" + strings.Repeat("Z", 43)
		p := redact.Preview(text + " " + secret)
		if utf8.RuneCountInString(p) > redact.MaxPreview {
			t.Fatalf("preview of %d runes", utf8.RuneCountInString(p))
		}
		// The fuzzer writes runs of one byte too: only Z runs beyond the
		// text's own are the token's.
		if strings.Count(p, "ZZZZZZZZ") > strings.Count(text, "ZZZZZZZZ") {
			t.Fatalf("a token survived: %q", p)
		}
		// A preview is rendered from the stored preview again: that must
		// change nothing.
		if again := redact.Preview(p); again != p {
			t.Fatalf("preview of a preview changed:\n%q\n%q", p, again)
		}
	})
}
