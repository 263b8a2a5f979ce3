package mcpserver

import (
	"context"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// A send's to that is a URL names an agent by its address: an address of
// this deployment ({base}/a/{handle}), which the network reaches by the
// handle, or the URL of one of the agent's synced aliases. Any other URL
// is refused: the network would read only its handle, and a message meant
// for an agent elsewhere would reach the agent of that handle here.

// isURL reports whether to names its target by URL (it has a scheme), as
// switchboard.AddressHandle reads it.
func isURL(to string) bool {
	u, err := url.Parse(strings.TrimSpace(to))
	return err == nil && u.Scheme != ""
}

// onDeployment reports whether the URL raw is on the deployment whose
// public base URL is base: the same scheme, host and port (the scheme's
// default filled in), no user information, and a path under base's.
func onDeployment(raw, base string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false
	}
	b, err := url.Parse(base)
	if err != nil {
		return false
	}
	if u.User != nil || u.Opaque != "" || !strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(hostPort(u), hostPort(b)) {
		return false
	}
	prefix := strings.TrimRight(b.Path, "/")
	return prefix == "" || u.Path == prefix || strings.HasPrefix(u.Path, prefix+"/")
}

// sameAddress reports whether the URLs a and b name the same address:
// scheme, host and port as sameOrigin compares them, the same path but
// for a trailing slash, the same query.
func sameAddress(a, b string) bool {
	au, err := url.Parse(strings.TrimSpace(a))
	if err != nil {
		return false
	}
	bu, err := url.Parse(strings.TrimSpace(b))
	if err != nil {
		return false
	}
	return au.User == nil && bu.User == nil && au.Opaque == "" && bu.Opaque == "" &&
		strings.EqualFold(au.Scheme, bu.Scheme) && strings.EqualFold(hostPort(au), hostPort(bu)) &&
		strings.TrimRight(au.Path, "/") == strings.TrimRight(bu.Path, "/") && au.RawQuery == bu.RawQuery
}

// aliasAt returns the agent's synced alias whose URL is raw, or nil.
func (s *Server) aliasAt(ctx context.Context, tg *target, raw string) (*switchboard.OutboundPeer, error) {
	if s.OutboundPeers == nil {
		return nil, nil
	}
	all, err := s.OutboundPeers.List(ctx, tg.agent.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if sameAddress(p.URL, raw) {
			return p, nil
		}
	}
	return nil, nil
}

// elsewhere is the refusal of a URL that is no address of this deployment
// and no synced alias's.
func elsewhere(to string) error {
	return errInvalid("%s is not an address of this deployment; to send to a remote agent, sync it as an alias: switchboard peers sync", shown(to))
}

// shown is text as an error message shows it: as it is when it is short
// and needs no escape, else quoted and cut.
func shown(text string) string {
	q := quote(text, 200)
	if q[1:len(q)-1] == text {
		return text
	}
	return q
}
