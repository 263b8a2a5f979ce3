package publicurl

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard"
)

// Where one agent names another (send on the network, the connector's
// SendTask, SendMessage and SessionOpen, MCP's send), it gives a handle or
// an address URL. Every face reads that name here, against the base URL
// of the deployment as the caller reached it, so that a URL of another
// deployment never reaches the agent of the same handle on this one.

// Handle returns the handle of the agent that to names on the deployment
// as r reaches it (Base): see HandleAt.
func (u Resolver) Handle(r *http.Request, to string) (handle string, ok bool) {
	return HandleAt(u.Base(r), to)
}

// HandleAt returns the handle of the agent that to names on the deployment
// whose base URL is base. A name without a ':' is a handle: it is returned
// trimmed and lower-cased (whether such an agent exists is the caller's
// to find out). Anything else is a URL, and ok is false unless it is an
// address on the deployment:
//
//   - the scheme, host and port of base (compared without regard to case,
//     the scheme's default port filled in where it is left out);
//   - no user information, query or fragment;
//   - the path of base, then /a/{handle}, with or without a trailing
//     slash, and nothing after it; {handle} is a valid handle
//     (switchboard.NormalizeHandle), returned lower-cased.
//
// So https://sb.example/a/bob names bob on the deployment at
// https://sb.example, and https://other.example/a/bob names no agent of it.
func HandleAt(base, to string) (handle string, ok bool) {
	to = strings.TrimSpace(to)
	if !strings.Contains(to, ":") {
		return strings.ToLower(to), true // no handle has a ':'; every URL does
	}
	u, err := url.Parse(to)
	if err != nil {
		return "", false
	}
	b, err := url.Parse(base)
	if err != nil || b.Host == "" || b.User != nil || b.Opaque != "" || b.RawQuery != "" || b.ForceQuery || b.Fragment != "" {
		return "", false // no base URL: it has no addresses
	}
	if u.User != nil || u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" ||
		!strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(hostPort(u), hostPort(b)) {
		return "", false
	}
	rest, found := strings.CutPrefix(u.EscapedPath(), strings.TrimRight(b.EscapedPath(), "/")+"/a/")
	if !found {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.Contains(rest, "/") {
		return "", false
	}
	raw, err := url.PathUnescape(rest)
	if err != nil {
		return "", false
	}
	h, err := switchboard.NormalizeHandle(raw)
	if err != nil || h != strings.ToLower(raw) { // NormalizeHandle trims spaces, which the address's path keeps
		return "", false
	}
	return h, true
}

// hostPort returns the URL's host with its port, the scheme's default
// filled in.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}

// NotAddress is the refusal of to, a name that HandleAt read as no
// address of this deployment (EINVALID): "{to} is not an address of this
// deployment; {hint}", where hint says how the caller reaches an agent
// elsewhere. to is shown as it is when it is short and plain, else quoted
// and cut.
func NotAddress(to, hint string) error {
	return switchboard.Errorf(switchboard.EINVALID, "%s is not an address of this deployment; %s", shown(to), hint)
}

// maxShown is the most of a caller's name an error message repeats.
const maxShown = 200

// shown is text as an error message shows it: as it is when it is short
// and needs no escape, else quoted and cut to maxShown bytes.
func shown(text string) string {
	cut := text
	if len(cut) > maxShown {
		n := maxShown
		for n > 0 && !utf8.RuneStart(cut[n]) {
			n--
		}
		cut = cut[:n] + "…"
	}
	q := strconv.Quote(cut)
	if cut == text && q[1:len(q)-1] == text {
		return text
	}
	return q
}
