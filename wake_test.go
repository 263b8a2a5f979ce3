package switchboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
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
		if got := switchboard.RedactSecrets(tc.in); got != tc.want {
			t.Errorf("RedactSecrets(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestWakePreview(t *testing.T) {
	long := "password: hunter2hunter2 " + strings.Repeat("word ", 200)
	p := switchboard.WakePreview(long)
	if n := utf8.RuneCountInString(p); n > switchboard.MaxWakePreview || !strings.HasSuffix(p, "…") || strings.Contains(p, "hunter2") {
		t.Fatalf("preview (%d runes): %q", n, p)
	}
	for _, in := range []string{"see https://example.com/hooks/0123456789abcdefghij/run?token=x#f", "Authorization: Bearer abcdefghijkl", long} {
		if p := switchboard.WakePreview(in); switchboard.WakePreview(p) != p {
			t.Errorf("a preview of a preview changed: %q", p)
		}
	}
	if p := switchboard.WakePreview("two\n\nlines\t here"); p != "two lines here" {
		t.Fatalf("whitespace not collapsed: %q", p)
	}
}

// FuzzWakePreview checks that a preview is always valid text within the
// limit, and that a Switchboard token in peer text never survives.
func FuzzWakePreview(f *testing.F) {
	for _, s := range []string{"", "hello", "Authorization: Bearer sbo_abcdefghijklmnop", "https://a.example/0123456789abcdef?x=1",
		"\xff\xfe broken utf8 sbp_0123456789abcdefgh", strings.Repeat("é", 400), "ZZZZZZZZ", "http://@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		secret := "sbp_" + strings.Repeat("Z", 43)
		p := switchboard.WakePreview(text + " " + secret)
		if utf8.RuneCountInString(p) > switchboard.MaxWakePreview {
			t.Fatalf("preview of %d runes", utf8.RuneCountInString(p))
		}
		// The fuzzer writes runs of one byte too: only Z runs beyond the
		// text's own are the token's.
		if strings.Count(p, "ZZZZZZZZ") > strings.Count(text, "ZZZZZZZZ") {
			t.Fatalf("a token survived: %q", p)
		}
		// A preview is rendered from the stored preview again: that must
		// change nothing.
		if again := switchboard.WakePreview(p); again != p {
			t.Fatalf("preview of a preview changed:\n%q\n%q", p, again)
		}
	})
}

// TestStoredPreview checks that a wake about a message stores the
// redacted preview of its text, made only when asked, and that a preview
// given outright wins.
func TestStoredPreview(t *testing.T) {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("call me   with api_key=supersecretvalue123"), a2a.NewTextPart("please"))
	r := &switchboard.WakeRequest{Message: msg}
	if got, want := r.StoredPreview(), "call me with api_key=supe… please"; got != want {
		t.Fatalf("preview of the message: %q, want %q", got, want)
	}
	r.Preview = "given"
	if got := r.StoredPreview(); got != "given" {
		t.Fatalf("a given preview: %q", got)
	}
	if got := (&switchboard.WakeRequest{}).StoredPreview(); got != "" {
		t.Fatalf("no message, no preview: %q", got)
	}
}

func TestApplyWakeUpdate(t *testing.T) {
	now := time.Now()
	u := func(s string) *string { return &s }
	c, err := switchboard.ApplyWakeUpdate("a1", nil, switchboard.WakeUpdate{URL: u("https://w.example/fire")}, now, nil)
	if err != nil || c.Preset != switchboard.WakeGeneric || c.Debounce != 10*time.Second || c.MaxPerHour != 0 ||
		c.KeyHeader != "Authorization" || c.KeyPrefix != "Bearer " || c.CLICommand != "switchboard" || c.OpenClawAgentID != "main" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	cc := switchboard.WakeClaudeCode
	c2, err := switchboard.ApplyWakeUpdate("a1", c, switchboard.WakeUpdate{Preset: &cc, Key: u("k")}, now, nil)
	if err != nil || c2.Debounce != 20*time.Second || c2.MaxPerHour != 25 || c2.URL != c.URL {
		t.Fatalf("claude-code defaults: %+v %v", c2, err)
	}
	n := 3
	c3, err := switchboard.ApplyWakeUpdate("a1", c2, switchboard.WakeUpdate{MaxPerHour: &n, KeyPrefix: u("")}, now, nil)
	if err != nil || c3.Debounce != 20*time.Second || c3.MaxPerHour != 3 || c3.Key != "k" || c3.KeyPrefix != "" {
		t.Fatalf("partial update: %+v %v", c3, err)
	}
	for name, upd := range map[string]switchboard.WakeUpdate{
		"no url":         {},
		"credentials":    {URL: u("https://u:p@w.example/")},
		"scheme":         {URL: u("file:///etc/passwd")},
		"newline in key": {URL: u("https://w.example/"), Key: u("a\nX-Evil: 1")},
		"header name":    {URL: u("https://w.example/"), KeyHeader: u("X Bad")},
		"agent id":       {URL: u("https://w.example/"), OpenClawAgentID: u("a b")},
		"template":       {URL: u("https://w.example/"), Preset: &cc, BodyTemplate: u("{}")},
	} {
		if _, err := switchboard.ApplyWakeUpdate("a1", nil, upd, now, nil); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": time.Minute, "junk": time.Minute, "-5": time.Minute, "0": 30 * time.Second, "45": 45 * time.Second,
		"99999999999999": time.Hour, now.Add(10 * time.Minute).Format(http.TimeFormat): 10 * time.Minute,
		now.Add(-time.Hour).Format(http.TimeFormat): 30 * time.Second,
	} {
		if got := switchboard.RetryAfter(in, now); got != want {
			t.Errorf("RetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzRetryAfter checks that whatever a receiver sends, the wait stays
// within the clamp.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "30", "3601", "-1", "1e9", "Sun, 01 Mar 2026 10:10:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		if d := switchboard.RetryAfter(h, now); d < switchboard.WakeRetryAfterMin || d > switchboard.WakeRetryAfterMax {
			t.Fatalf("RetryAfter(%q) = %s", h, d)
		}
	})
}

// TestWakeCheckScheme: a wake URL must be https unless plain http is
// allowed (the operator opened the network guard).
func TestWakeCheckScheme(t *testing.T) {
	for _, tc := range []struct {
		url       string
		allowHTTP bool
		ok        bool
	}{
		{"https://wake.example/hook", false, true},
		{"https://wake.example/hook", true, true},
		{"http://wake.example/hook", false, false},
		{"HTTP://wake.example/hook", false, false},
		{"http://10.0.0.5:8080/hook", true, true},
	} {
		c := &switchboard.WakeConfig{URL: tc.url}
		err := c.CheckScheme(tc.allowHTTP)
		if (err == nil) != tc.ok {
			t.Errorf("CheckScheme(%q, %v) = %v", tc.url, tc.allowHTTP, err)
		}
		if err != nil && (switchboard.ErrorCode(err) != switchboard.EINVALID || !strings.Contains(err.Error(), "must be https")) {
			t.Errorf("CheckScheme(%q): unclear error %v", tc.url, err)
		}
	}
}
