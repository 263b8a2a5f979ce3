package mcpserver

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzCredentialInQuery: any query parameter whose name, decoded, holds
// "token" or "auth" is caught, and a query without such a name is not.
func FuzzCredentialInQuery(f *testing.F) {
	for _, seed := range []string{"", "token=x", "a=1&b=2", "%74oken=x", "Access_Token=1", "x=token", "auth", "=&&=", "%zz=1", "a;token=1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := credentialInQuery(raw)
		want := false
		for part := range strings.SplitSeq(raw, "&") {
			name, _, _ := strings.Cut(part, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			name = strings.ToLower(name)
			want = want || strings.Contains(name, "token") || strings.Contains(name, "auth")
		}
		if got != want {
			t.Fatalf("credentialInQuery(%q) = %v, want %v", raw, got, want)
		}
		if q, err := url.ParseQuery(raw); err == nil {
			for name := range q {
				l := strings.ToLower(name)
				if (strings.Contains(l, "token") || strings.Contains(l, "auth")) && !got {
					t.Fatalf("credentialInQuery(%q) missed %q", raw, name)
				}
			}
		}
	})
}

// FuzzSameOrigin: an Origin is accepted only if it names the base's scheme
// and host; the base itself is always accepted.
func FuzzSameOrigin(f *testing.F) {
	for _, seed := range [][2]string{
		{"https://sb.example", "https://sb.example"},
		{"https://sb.example:443", "https://sb.example"},
		{"http://sb.example", "https://sb.example"},
		{"https://evil.example", "https://sb.example/prefix"},
		{"null", "http://127.0.0.1:8080"},
		{"https://user@sb.example", "https://sb.example"},
		{"https://sb.example/path", "https://sb.example"},
		{"HTTPS://SB.EXAMPLE", "https://sb.example"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, origin, base string) {
		ok := sameOrigin(origin, base)
		if !ok {
			return
		}
		ou, err1 := url.Parse(origin)
		bu, err2 := url.Parse(base)
		if err1 != nil || err2 != nil {
			t.Fatalf("sameOrigin(%q, %q) accepted what does not parse", origin, base)
		}
		if !strings.EqualFold(ou.Scheme, bu.Scheme) || !strings.EqualFold(ou.Hostname(), bu.Hostname()) || ou.User != nil {
			t.Fatalf("sameOrigin(%q, %q) accepted another origin", origin, base)
		}
	})
}
