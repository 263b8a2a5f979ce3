package domainname_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/domainname"
)

// TestNormalize: a host name is held lower case, in ASCII, without a
// trailing dot.
func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"bot.example.com":                "bot.example.com",
		"  Bot.Example.COM  ":            "bot.example.com",
		"bot.example.com.":               "bot.example.com",
		"a.b":                            "a.b",
		"Bücher.example":                 "xn--bcher-kva.example",
		"xn--bcher-kva.example":          "xn--bcher-kva.example",
		"ＢＯＴ．example.com":                "bot.example.com", // full-width forms, as a lookup maps them
		"my-bot.sub.example.co.uk":       "my-bot.sub.example.co.uk",
		"123.example.com":                "123.example.com",
		strings.Repeat("a", 63) + ".com": strings.Repeat("a", 63) + ".com",
	} {
		got, err := domainname.Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestNormalizeRefuses: each kind of name that cannot be an agent's
// domain is refused with EUNPROCESSABLE and a message that says which.
func TestNormalizeRefuses(t *testing.T) {
	long := strings.Repeat(strings.Repeat("a", 60)+".", 5) + "com" // 308 characters
	for in, why := range map[string]string{
		"":                               "empty",
		"   ":                            "empty",
		"127.0.0.1":                      "IP address",
		"93.184.216.34":                  "IP address",
		"::1":                            "IP address",
		"[::1]":                          "IP address",
		"2001:db8::1":                    "IP address",
		"fe80::1%eth0":                   "IP address",
		"[2001:db8::1]:443":              "IP address",
		"10.0.0.1:8080":                  "IP address",
		"*.example.com":                  "wildcard",
		"*":                              "wildcard",
		"bot.*.example.com":              "wildcard",
		"https://bot.example.com":        "without a scheme",
		"http://bot.example.com/":        "without a scheme",
		"bot.example.com:8443":           "without a port",
		"bot.example.com:":               "without a port",
		"bot.example.com/a/bob":          "without a path",
		"bot.example.com/":               "without a path",
		"bot.example.com?x=1":            "query",
		"bot.example.com#top":            "query",
		"user@bot.example.com":           "user information",
		"localhost":                      "single-label",
		"LOCALHOST.":                     "single-label",
		"bot":                            "single-label",
		"bot..example.com":               "not a valid DNS name",
		".example.com":                   "not a valid DNS name",
		"-bot.example.com":               "not a valid DNS name",
		"bot-.example.com":               "not a valid DNS name",
		"bot_1.example.com":              "not a valid DNS name",
		"bot example.com":                "not a valid DNS name",
		strings.Repeat("a", 64) + ".com": "not a valid DNS name",
		long:                             "valid DNS name",
		"123.456":                        "last label is a number",
		"0x7f.1":                         "last label is a number",
	} {
		got, err := domainname.Normalize(in)
		if switchboard.ErrorCode(err) != switchboard.EUNPROCESSABLE || !strings.Contains(switchboard.ErrorMessage(err), why) {
			t.Errorf("Normalize(%q) = %q, %v; want a refusal that says %q", in, got, err, why)
		}
	}
}

// TestNormalizeQuotesInput: a refusal repeats the input quoted and cut,
// so that what a terminal would read stays escaped.
func TestNormalizeQuotesInput(t *testing.T) {
	_, err := domainname.Normalize("\x1b[2J" + strings.Repeat("x", 300) + ":80")
	msg := switchboard.ErrorMessage(err)
	if strings.Contains(msg, "\x1b") || len(msg) > 400 || !strings.Contains(msg, `"\x1b[2J`) {
		t.Fatalf("refusal: %q", msg)
	}
}

// TestHost: a Host header is read as a domain is held, without its port;
// an IP address or a header no host name has is "".
func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"bot.example.com":         "bot.example.com",
		"Bot.Example.com:443":     "bot.example.com",
		"bot.example.com.:8080":   "bot.example.com",
		"xn--bcher-kva.example":   "xn--bcher-kva.example",
		"127.0.0.1:8080":          "",
		"[::1]:8080":              "",
		"":                        "",
		"bot.example.com/x":       "",
		"bücher.example":          "",
		"bot.example.com:8080:80": "",
	} {
		if got := domainname.Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnder: a name is under a parent when it is the parent or ends in
// "." and the parent.
func TestUnder(t *testing.T) {
	for _, c := range []struct {
		name, parent string
		want         bool
	}{
		{"sb.example.com", "sb.example.com", true},
		{"bot.sb.example.com", "sb.example.com", true},
		{"a.b.sb.example.com", "sb.example.com", true},
		{"xsb.example.com", "sb.example.com", false},
		{"example.com", "sb.example.com", false},
		{"sb.example.com", "", false},
	} {
		if got := domainname.Under(c.name, c.parent); got != c.want {
			t.Errorf("Under(%q, %q) = %t, want %t", c.name, c.parent, got, c.want)
		}
	}
}

// FuzzNormalize: whatever is typed, Normalize refuses it with
// EUNPROCESSABLE or returns a name it holds as it is, which Host reads
// as itself.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"bot.example.com", "Bücher.example", "*.x", "localhost", "[::1]:80", "a..b", "https://x.y/z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := domainname.Normalize(in)
		if err != nil {
			if switchboard.ErrorCode(err) != switchboard.EUNPROCESSABLE {
				t.Fatalf("Normalize(%q): %v", in, err)
			}
			return
		}
		if again, err := domainname.Normalize(got); err != nil || again != got {
			t.Fatalf("Normalize(%q) = %q, which normalises to %q, %v", in, got, again, err)
		}
		if h := domainname.Host(got + ":443"); h != got {
			t.Fatalf("Host(%q) = %q", got+":443", h)
		}
	})
}
