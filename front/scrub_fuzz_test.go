package front_test

import (
	"encoding/json"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/front"
)

// fuzzPrivate are the private ranges, written apart from the scrubber's
// own list so that the fuzz tests check it.
var fuzzPrivate = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("fe80::/10"),
}

// The names a scrubbed text must not hold: newTestScrubber's upstream
// hosts and ts.net names; and the ones every card parsed with testUpstream
// and testCardURL holds, whatever interfaces it names.
var (
	fuzzHostWords     = regexp.MustCompile(`(?i)agent\.acme\.example|rpc\.acme-grpc\.io|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.ts\.net`)
	fuzzCardHostWords = regexp.MustCompile(`(?i)agent\.acme\.example|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.ts\.net`)
)

// checkScrubbed fails if out, a scrubbed text, holds a URL on a private
// IP address, or a name hosts matches standing as a word.
func checkScrubbed(t *testing.T, hosts *regexp.Regexp, in, out string) {
	t.Helper()
	for rest := out; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		if a, ok := fuzzURLAddr(rest); ok {
			for _, p := range fuzzPrivate {
				if p.Contains(a.Unmap()) {
					t.Fatalf("String(%q) = %q: a URL on the private address %v", in, out, a)
				}
			}
		}
	}
	for _, m := range hosts.FindAllStringIndex(out, -1) {
		before := m[0] > 0 && fuzzAlnum(out[m[0]-1])
		after := m[1] < len(out) && fuzzAlnum(out[m[1]])
		if !before && !after {
			t.Fatalf("String(%q) = %q: it names %q", in, out, out[m[0]:m[1]])
		}
	}
}

// fuzzURLAddr returns the IP address of the URL authority that starts
// rest, if it is one.
func fuzzURLAddr(rest string) (netip.Addr, bool) {
	if i := strings.IndexAny(rest, "/?#\\ \t\r\n\"'<>`"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if un, err := url.PathUnescape(rest); err == nil {
		rest = un
	}
	host := rest
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i >= 0 {
			host = host[1:i]
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(host, "."))
	return a, err == nil
}

func fuzzAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func FuzzScrub(f *testing.F) {
	for _, s := range []string{
		"see https://10.0.0.1/x.", "https://[fd00::1]:8443/", "call agent.acme.example now", "box.tail1234.ts.net",
		"https://docs.example.org/?u=http://127.0.0.1", "https://user:pw@docs.example.org/", "https://[fe80::1%25en0]/",
		"https://10．0．0．1/", "https://0x7f.1/", "HTTPS://AGENT.ACME.EXAMPLE./", testPublic + "/x", "mailto:a@b.org urn:x",
		"(https://192.168.1.1/a_(b))", "https://10.0.0.1.nip.io/" + strings.Repeat("x", 30),
	} {
		f.Add(s)
	}
	s := newTestScrubber()
	f.Fuzz(func(t *testing.T, in string) {
		out := s.String(in)
		checkScrubbed(t, fuzzHostWords, in, out)
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if leaks := front.Leaks(b, s); len(leaks) != 0 {
			t.Fatalf("String(%q) = %q, which leaks %q", in, out, leaks)
		}
	})
}

func FuzzParseCard(f *testing.F) {
	for _, name := range []string{"testdata/card-v1-leaky.json", "testdata/card-v03-leaky.json"} {
		f.Add(mustReadFile(f, name))
	}
	f.Add([]byte(`{"name": "x", "skills": [{"id": "a", "examples": ["http://10.0.0.1"]}], "capabilities": {"extensions": [{"params": {"k": [[["agent.acme.example"]]]}}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := front.ParseCard(raw, testUpstream, testCardURL, testPublic)
		if err != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if leaks := front.Leaks(b, c.Scrubber()); len(leaks) != 0 {
			t.Fatalf("ParseCard(%s) leaks %q", raw, leaks)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		walkStrings(v, func(s string) { checkScrubbed(t, fuzzCardHostWords, string(raw), s) })
	})
}

// walkStrings calls fn with every string and object key in v.
func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			walkStrings(e, fn)
		}
	}
}
