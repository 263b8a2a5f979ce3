package publicurl

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/domainname"
)

// Where one agent names another (send on the network, the connector's
// SendTask, SendMessage and SessionOpen, MCP's send), it gives a handle or
// an address URL. Every face reads that name here, against the base URL
// of the deployment as the caller reached it, so that a URL of another
// deployment never reaches the agent of the same handle on this one.

// Handle returns the handle of the agent that to names on the deployment
// as r reaches it (Base), with agent domains found by Agents: see
// HandleAt.
func (u Resolver) Handle(r *http.Request, to string) (handle string, ok bool, err error) {
	return HandleAt(r.Context(), u.Base(r), to, u.Agents)
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
// Or the address of an agent domain: the root of a host (path empty or
// "/") that domains finds an agent of, on https or base's scheme and its
// default port, with no user information, query or fragment. A lookup
// that fails otherwise than ENOTFOUND is returned as err.
//
// So https://sb.example/a/bob names bob on the deployment at
// https://sb.example, as does https://bot.example.com/ when bob's domain
// is bot.example.com, and https://other.example/a/bob names no agent of
// it.
func HandleAt(ctx context.Context, base, to string, domains DomainFinder) (handle string, ok bool, err error) {
	to = strings.TrimSpace(to)
	if !strings.Contains(to, ":") {
		return strings.ToLower(to), true, nil // no handle has a ':'; every URL does
	}
	u, err := url.Parse(to)
	if err != nil {
		return "", false, nil
	}
	b, err := url.Parse(base)
	if err != nil || b.Host == "" || b.User != nil || b.Opaque != "" || b.RawQuery != "" || b.ForceQuery || b.Fragment != "" {
		return "", false, nil // no base URL: it has no addresses
	}
	if u.User != nil || u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", false, nil
	}
	if !strings.EqualFold(hostPort(u), hostPort(b)) {
		return domainHandle(ctx, b, u, domains)
	}
	if !strings.EqualFold(u.Scheme, b.Scheme) {
		return "", false, nil
	}
	rest, found := strings.CutPrefix(u.EscapedPath(), strings.TrimRight(b.EscapedPath(), "/")+"/a/")
	if !found {
		return "", false, nil
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.Contains(rest, "/") {
		return "", false, nil
	}
	raw, err := url.PathUnescape(rest)
	if err != nil {
		return "", false, nil
	}
	h, err := switchboard.NormalizeHandle(raw)
	if err != nil || h != strings.ToLower(raw) { // NormalizeHandle trims spaces, which the address's path keeps
		return "", false, nil
	}
	return h, true, nil
}

// domainHandle returns the handle of the agent whose domain u's host is,
// when u is the address of an agent domain on the deployment at base
// (HandleAt).
func domainHandle(ctx context.Context, base, u *url.URL, domains DomainFinder) (string, bool, error) {
	scheme := strings.ToLower(u.Scheme)
	if domains == nil || (scheme != "https" && !strings.EqualFold(scheme, base.Scheme)) || (u.Path != "" && u.Path != "/") ||
		(u.Port() != "" && hostPort(u) != u.Hostname()+defaultPort(scheme)) {
		return "", false, nil
	}
	host := domainname.Host(u.Hostname())
	if host == "" || host != strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) {
		return "", false, nil
	}
	g, err := domains.FindAgentByDomain(ctx, host)
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return g.Handle, true, nil
}

// defaultPort is ":443" or ":80", the port of scheme (https or http).
func defaultPort(scheme string) string {
	if scheme == "https" {
		return ":443"
	}
	return ":80"
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
