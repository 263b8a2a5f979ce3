package domainname

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/switchboard-dev/switchboard"
)

// profile maps a name as a lookup would (case folded, full-width forms
// narrowed), then requires a valid IDNA 2008 name of letters, digits and
// hyphens within the DNS's lengths.
var profile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.ValidateLabels(true),
	idna.StrictDomainName(true), idna.VerifyDNSLength(true), idna.Transitional(false))

// MaxLen is the longest domain name, in its ASCII form (RFC 1035).
const MaxLen = 253

// Normalize returns name as an agent's domain is held (Parse), or refuses
// it with EUNPROCESSABLE and a message that says which.
func Normalize(name string) (string, error) {
	ascii, err := Parse(name)
	var bad *Error
	if errors.As(err, &bad) {
		if bad.Name == "" {
			return "", switchboard.Errorf(switchboard.EUNPROCESSABLE, "the domain is empty; give a host name such as bot.example.com")
		}
		return "", switchboard.Errorf(switchboard.EUNPROCESSABLE, "%s is not a domain an agent can have: %s", quoted(bad.Name), bad.Why)
	}
	return ascii, err
}

// Error is Parse's refusal: what was given, and why it is no domain.
type Error struct {
	Name string // as given, trimmed
	Why  string // what is wrong, and what to give instead
}

// Error implements error.
func (e *Error) Error() string {
	if e.Name == "" {
		return "an empty domain name"
	}
	return quoted(e.Name) + " is not a domain name: " + e.Why
}

// Parse returns name as a public host name is held: lower case, ASCII (an
// internationalised name in punycode), without a trailing dot. It refuses
// (an *Error that says which): an empty name, an IP address (v4 or v6), a
// wildcard, a name with a scheme, a port, a path, user information, a
// query or a fragment, a name that is not a valid DNS name (its labels,
// its length), and a single-label name (localhost).
func Parse(name string) (string, error) {
	s := strings.TrimSpace(name)
	refuse := func(why string) error { return &Error{Name: s, Why: why} }
	switch {
	case s == "":
		return "", &Error{}
	case strings.Contains(s, "://"):
		return "", refuse("it has a scheme: give the host name alone, without a scheme (bot.example.com, not https://bot.example.com)")
	case strings.Contains(s, "*"):
		return "", refuse("a wildcard names many hosts; give one host name")
	case isIP(s):
		return "", refuse("it is an IP address, which has no name; give a host name")
	case strings.ContainsAny(s, "/\\"):
		return "", refuse("give the host name alone, without a path")
	case strings.ContainsAny(s, "?#"):
		return "", refuse("give the host name alone, without a query or fragment")
	case strings.Contains(s, "@"):
		return "", refuse("give the host name alone, without user information")
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if isIP(host) {
			return "", refuse("it is an IP address, which has no name; give a host name")
		}
		return "", refuse("it has a port: give the host name without a port (domains are served on the standard ports)")
	} else if strings.Contains(s, ":") {
		return "", refuse("it has a port: give the host name alone, without a port")
	}
	s = strings.TrimSuffix(s, ".")
	ascii, err := profile.ToASCII(s)
	if err == nil {
		_, err = profile.ToASCII(ascii) // its punycode labels must decode to valid ones
	}
	if err != nil || !utf8.ValidString(s) {
		return "", refuse("it is not a valid DNS name (each label 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen; at most 253 characters in all)")
	}
	ascii = strings.ToLower(ascii)
	if err := checkLabels(ascii); err != "" {
		return "", refuse(err)
	}
	return ascii, nil
}

// checkLabels checks an ASCII name's labels, as Normalize's last step,
// and returns what is wrong, or "".
func checkLabels(name string) string {
	if len(name) > MaxLen {
		return "it is longer than " + strconv.Itoa(MaxLen) + " characters"
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return "a single-label name (such as localhost) is no public domain; give a name with a dot, such as bot.example.com"
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "it is not a valid DNS name (each label 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen)"
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return "it is not a valid DNS name (letters, digits and hyphens only)"
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "its last label is a number, which no top-level domain is"
	}
	return ""
}

// isIP reports whether s is an IP address, bracketed or not, with or
// without an IPv6 zone.
func isIP(s string) bool {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// Host returns the host name of a request's Host header as an agent's
// domain is held (lower case, without a trailing dot), without its port;
// "" when it is empty, an IP address, or holds what no ASCII host name
// has (an internationalised name reaches a server in punycode).
func Host(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > MaxLen || isIP(h) {
		return ""
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return ""
		}
	}
	return strings.ToLower(h)
}

// Under reports whether name is parent or a name under it (both as
// Normalize holds them).
func Under(name, parent string) bool {
	return parent != "" && (name == parent || strings.HasSuffix(name, "."+parent))
}

// maxShown is the most of an owner's input a refusal repeats.
const maxShown = 100

// quoted is s as a refusal shows it: quoted, and cut when long.
func quoted(s string) string {
	if len(s) > maxShown {
		n := maxShown
		for n > 0 && (s[n]&0xC0) == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
