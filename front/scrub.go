package front

import (
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/netguard"

	"github.com/switchboard-dev/switchboard"
)

// The texts that stand where the scrubber removed something.
const (
	URLRemoved  = "[private URL removed]"
	HostRemoved = "[private host removed]"
)

// MaxScrubDepth is how deep Scrubber.Value descends into a JSON value;
// what lies deeper is dropped.
const MaxScrubDepth = 20

// urlPattern finds URLs in text: "://", after a scheme or not, then
// anything up to whitespace, a quote or an angle bracket. Bracketed IPv6
// literals are part of the match; trailing punctuation is trimmed
// afterwards.
var urlPattern = regexp.MustCompile("(?i)(?:[a-z][a-z0-9+.-]*)?://[^\\s\"'<>`]*")

// hostName matches what NewScrubber takes as an upstream's hostname: a
// DNS name or an IP address, as hostKey leaves them.
var hostName = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9.:-]*[a-z0-9])?$`)

// urlHost matches the hostname of a URL that may stand in a card, but
// for an IP literal in brackets.
var urlHost = regexp.MustCompile(`^(?i)[a-z0-9_.-]+$`)

// tsNetName matches a name under ts.net (a Tailscale tailnet's hosts).
const tsNetName = `[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.ts\.net`

// A Scrubber removes from text what would tell a peer where a private
// upstream runs, by the rules of a public front's card:
//
//   - a URL is replaced with URLRemoved when it is not https or wss,
//     carries credentials, fails to parse (an IPv6 zone, say), is on a
//     private host (see netguard.PrivateHost) or a host that is not a DNS name
//     or an IP address, or is on an upstream host, or holds another URL,
//     or names past its origin a hostname the scrubber removes;
//   - an upstream hostname that is an IP address or has a dot in it, and
//     any name under ts.net, standing as a word (no ASCII letter or digit
//     on either side) is replaced with HostRemoved;
//   - a URL on the public origin passes the URL rules (but credentials
//     and what follows its origin are still checked);
//   - urn: and mailto: are not URLs in this sense and pass;
//   - with Secrets (WithSecrets), the values of the front's credentials
//     are replaced with CredentialRemoved first, wherever they stand.
//
// A Scrubber is immutable after construction and safe for concurrent use.
type Scrubber struct {
	public    string          // origin of the public address, "" if none
	target    string          // host:port of the public address, as a gRPC interface names it
	upstreams map[string]bool // hostKey of every upstream host
	hosts     *regexp.Regexp  // upstream hostnames and ts.net names
	secrets   *Secrets        // the credentials' values; nil: none
}

// WithSecrets returns a copy of s that also removes the values of
// secrets (nil: none).
func (s *Scrubber) WithSecrets(secrets *Secrets) *Scrubber {
	c := *s
	c.secrets = secrets
	return &c
}

// NewScrubber returns a Scrubber for a front whose public address is
// public and whose upstream is named by upstreams: the upstream URL, its
// card URL, and every interface URL its card names. An entry that is not
// a URL with a host is taken as a bare hostname, and ignored unless it is
// one. URLs on every upstream host are removed; as a word standing
// alone, only an IP address or a name with a dot in it is (see wordName):
// a single label ("agent", a Compose service) tells a peer nothing it
// could reach, and is mostly an everyday word.
func NewScrubber(public string, upstreams ...string) *Scrubber {
	s := &Scrubber{upstreams: map[string]bool{}}
	if u, err := url.Parse(public); err == nil && u.Host != "" {
		s.public = origin(u)
		port := u.Port()
		if port == "" {
			port = "80"
			if strings.EqualFold(u.Scheme, "https") {
				port = "443"
			}
		}
		s.target = strings.ToLower(net.JoinHostPort(u.Hostname(), port))
	}
	alts := []string{tsNetName}
	for _, raw := range upstreams {
		h := raw
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			h = u.Hostname()
		}
		h = hostKey(h)
		if !hostName.MatchString(h) || s.upstreams[h] {
			continue
		}
		s.upstreams[h] = true
		if !wordName(h) {
			continue // "agent" or "127.1": a URL on it is removed, the word is not
		}
		alts = append(alts, regexp.QuoteMeta(h))
	}
	sort.Slice(alts[1:], func(i, j int) bool { return len(alts[1+i]) > len(alts[1+j]) }) // longest first
	s.hosts = regexp.MustCompile("(?i)(?:" + strings.Join(alts, "|") + ")")
	return s
}

// String returns str scrubbed.
func (s *Scrubber) String(str string) string {
	str = s.secrets.String(str)
	// A replacement changes what stands beside the names around it: a
	// name skipped for the letter before it may stand as a word once that
	// letter is gone. Scrub again until nothing changes; twice is enough
	// but for contrived text.
	for range 4 {
		edits := s.edits(str, 0)
		if len(edits) == 0 {
			break
		}
		var b strings.Builder
		last := 0
		for _, e := range edits {
			b.WriteString(str[last:e.start])
			b.WriteString(e.repl)
			last = e.end
		}
		b.WriteString(str[last:])
		str = b.String()
	}
	return str
}

// Value returns v, a value decoded from JSON, with every string and every
// object key scrubbed, down to MaxScrubDepth levels; deeper values become
// null. Keys that become equal once scrubbed keep the value of the first
// in sorted order. Keys such as "__proto__" are plain keys.
func (s *Scrubber) Value(v any) any {
	return s.value(v, 0, false)
}

// value is Value at depth; with clip, strings are clipped to
// MaxDescriptionLen runes and keys to MaxShortLen, both without the
// characters switchboard.CheckDescription and CheckName refuse.
func (s *Scrubber) value(v any, depth int, clip bool) any {
	if depth > MaxScrubDepth {
		return nil
	}
	switch v := v.(type) {
	case string:
		if clip {
			return s.text(v, switchboard.MaxDescriptionLen)
		}
		return s.String(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.value(e, depth+1, clip)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(v))
		for _, k := range keys {
			sk := s.String(k)
			if clip {
				sk = s.name(k, MaxShortLen)
			}
			if _, dup := out[sk]; !dup {
				out[sk] = s.value(v[k], depth+1, clip)
			}
		}
		return out
	default:
		return v
	}
}

// PublicURL reports whether raw is one absolute https URL that the
// scrubber leaves as it is: what a card's documentationUrl, iconUrl or
// provider.url must be to be kept.
func (s *Scrubber) PublicURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return false
	}
	m := urlPattern.FindStringIndex(raw)
	return m != nil && m[0] == 0 && m[1] == len(raw) && trimURL(raw) == raw && s.String(raw) == raw
}

// An edit replaces str[start:end] with repl.
type edit struct {
	start, end int
	repl       string
}

// edits returns, in order, what String replaces in str, its offsets
// shifted by off.
func (s *Scrubber) edits(str string, off int) []edit {
	if s.target != "" && strings.EqualFold(str, s.target) {
		return nil // the public address's own gRPC target, even on an upstream's host
	}
	var out []edit
	last := 0
	for _, m := range urlPattern.FindAllStringIndex(str, -1) {
		start, end := m[0], m[0]+len(trimURL(str[m[0]:m[1]]))
		out = append(out, s.hostEdits(str[last:start], off+last)...)
		if !s.keepURL(str[start:end]) {
			out = append(out, edit{off + start, off + end, URLRemoved})
		}
		last = end
	}
	return append(out, s.hostEdits(str[last:], off+last)...)
}

// hostEdits returns the upstream hostnames and ts.net names in text that
// stand as words.
func (s *Scrubber) hostEdits(text string, off int) []edit {
	var out []edit
	for _, m := range s.hosts.FindAllStringIndex(text, -1) {
		if (m[0] > 0 && alnum(text[m[0]-1])) || (m[1] < len(text) && alnum(text[m[1]])) {
			continue
		}
		out = append(out, edit{off + m[0], off + m[1], HostRemoved})
	}
	return out
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// keepURL reports whether the URL tok may stand in a public card.
func (s *Scrubber) keepURL(tok string) bool {
	u, err := url.Parse(tok)
	if err != nil || u.User != nil || u.Host == "" || strings.Contains(u.Host, "%") {
		return false
	}
	public := origin(u) == s.public
	if !public {
		switch strings.ToLower(u.Scheme) {
		case "https", "wss":
		default:
			return false
		}
		h := u.Hostname()
		if netguard.PrivateHost(h) || s.upstreams[hostKey(h)] || !strings.HasPrefix(u.Host, "[") && !urlHost.MatchString(h) {
			return false
		}
	}
	// What follows the origin may hold a hostname, or another URL: a URL
	// inside a URL is hidden with it, whatever it is, which keeps the
	// scrubber linear in the length of the text.
	i := strings.Index(tok, "://") + 3
	if j := strings.IndexAny(tok[i:], "/?#"); j >= 0 {
		i += j
	} else {
		i = len(tok)
	}
	if !public && len(s.hostEdits(tok[:i], 0)) > 0 {
		return false // a name under an upstream host, say
	}
	return strings.Count(tok, "://") == 1 && len(s.hostEdits(tok[i:], 0)) == 0
}

// origin returns u's origin in the form origins are compared in: ws and
// wss count as http and https, and default ports are left out.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	port := u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	host := hostKey(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// trimURL returns tok without the punctuation that ends the sentence
// around it: a closing bracket is trimmed only when the URL does not
// open it.
func trimURL(tok string) string {
	for tok != "" {
		c := tok[len(tok)-1]
		switch c {
		case '.', ',', ';', ':', '!', '?', '*', '\\':
		case ')':
			if strings.Count(tok, "(") >= strings.Count(tok, ")") {
				return tok
			}
		case ']':
			if strings.Count(tok, "[") >= strings.Count(tok, "]") {
				return tok
			}
		case '}':
			if strings.Count(tok, "{") >= strings.Count(tok, "}") {
				return tok
			}
		default:
			return tok
		}
		tok = tok[:len(tok)-1]
	}
	return tok
}
