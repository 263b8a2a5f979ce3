package redact

import (
	"regexp"
	"strings"
	"testing"
)

// secretAssignment is the one-pattern form of what redactAssignments does:
// "name: value" and "name=value" where the name says it holds a secret.
var secretAssignment = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:authorization|key|token|secret|signature|password|passwd|access-client-id|cookie)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token)\s+)?([^\s"',;&]+)`)

// redactEverywhere is Secrets as plain regular expressions: without
// the word checks that let it skip patterns, every pattern over the whole
// text, and the whole secret assignment as one pattern.
func redactEverywhere(text string) string {
	s := webURL.ReplaceAllStringFunc(text, redactURL)
	s = secretAssignment.ReplaceAllStringFunc(s, func(m string) string {
		g := secretAssignment.FindStringSubmatch(m)
		if strings.EqualFold(g[1], "idempotency-key") {
			return m
		}
		scheme := g[3]
		if scheme != "" {
			scheme += " "
		}
		return g[1] + g[2] + scheme + Cut(g[4])
	})
	s = bearerCredential.ReplaceAllStringFunc(s, func(m string) string {
		g := bearerCredential.FindStringSubmatch(m)
		return g[1] + " " + Cut(g[2])
	})
	return knownToken.ReplaceAllStringFunc(s, Cut)
}

var redactSeeds = []string{
	"", "plain words only", "Authorization: Bearer abcdefghijklmnop", "api_KEY=supersecretvalue",
	"to\u212Aen=supersecretvalue", "pa\u017Fsword: hunter2hunter2", "ba\u017Fic QWxhZGRpbjpvcGVu",
	"HTTPS://example.com/0123456789abcdefgh?x=1", "ghp_0123456789abcdef and AKIA0123456789ABCDEF",
	"X-Signature: 0123456789abcdef", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
	"https://%E2%84%AAey=abcdefghijkl", // a host that decodes to a secret name
}

// TestRedactSecretsSkipsOnlyWhatCannotMatch checks that skipping a pattern
// whose words are absent changes no result.
func TestRedactSecretsSkipsOnlyWhatCannotMatch(t *testing.T) {
	for _, s := range redactSeeds {
		if got, want := Secrets(s), redactEverywhere(s); got != want {
			t.Errorf("Secrets(%q) = %q, every pattern gives %q", s, got, want)
		}
	}
}

func FuzzSecretsSkips(f *testing.F) {
	for _, s := range redactSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Secrets(s), redactEverywhere(s); got != want {
			t.Fatalf("Secrets(%q) = %q, every pattern gives %q", s, got, want)
		}
	})
}

func TestLeadingWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short text", 100, "short text"},
		{"one two three four", 12, "one two …"},
		{"one  two\n\nthree four five", 19, "one two three …"},
		{"averyveryverylongword tail", 10, "…"},
	} {
		if got := leadingWords(tc.in, tc.max); got != tc.want {
			t.Errorf("leadingWords(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	// A secret that straddles the bound is dropped whole, never cut to a
	// piece too short to be recognised.
	text := strings.Repeat("word ", 409) + "sbp_ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	if p := Preview(text); strings.Contains(p, "sbp_") {
		t.Fatalf("a token at the bound survived: %q", p[len(p)-40:])
	}
}

func BenchmarkPreview(b *testing.B) {
	words := strings.Repeat("the quick brown fox jumps over the lazy dog ", 24) // ~1 KiB
	for _, bc := range []struct{ name, text string }{
		{"1KiB-plain", words},
		{"1KiB-with-secret", words + " api_key=supersecretvalue123"},
		{"1MiB", strings.Repeat(words, 1024)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				Preview(bc.text)
			}
		})
	}
}
