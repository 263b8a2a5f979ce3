package front

import (
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/netguard"
)

// MaxURLLen bounds an upstream's URLs.
const MaxURLLen = 2048

// CheckUpstream checks a front's upstream URL and card URL: https (plain
// http only where the guard is opened), no credentials in them, a host
// that is not private (unless the guard is opened; the guard refuses
// private addresses again when it dials, after DNS), and the card on the
// upstream's origin, since the card is fetched with the credentials.
func CheckUpstream(upstream, cardURL string, guard netguard.Options) error {
	u, err := checkURL("upstream", upstream, guard)
	if err != nil {
		return err
	}
	if cardURL == "" {
		return nil
	}
	c, err := checkURL("upstream_card_url", cardURL, guard)
	if err != nil {
		return err
	}
	if !netguard.SameOrigin(u, c) {
		return switchboard.Errorf(switchboard.EINVALID, "upstream_card_url must be on the upstream's origin (%s://%s): the card is fetched with the upstream's credentials", u.Scheme, u.Host)
	}
	return nil
}

func checkURL(field, raw string, guard netguard.Options) (*url.URL, error) {
	if len(raw) > MaxURLLen {
		return nil, switchboard.Errorf(switchboard.EINVALID, "%s is longer than %d characters", field, MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, switchboard.Errorf(switchboard.EINVALID, "%s must be an https URL", field)
	}
	open := guard.AllowsPlainHTTP()
	switch {
	case u.Scheme != "https" && !(open && u.Scheme == "http"):
		return nil, switchboard.Errorf(switchboard.EINVALID, "%s must be an https URL (plain http only on a private network: serve --allow-private-networks)", field)
	case u.User != nil:
		return nil, switchboard.Errorf(switchboard.EINVALID, "%s must not carry credentials: set them with PUT /agents/{ref}/upstream-credentials", field)
	case u.Fragment != "":
		return nil, switchboard.Errorf(switchboard.EINVALID, "%s must not have a fragment", field)
	case !open && netguard.PrivateHost(u.Hostname()):
		return nil, switchboard.Errorf(switchboard.EINVALID, "%s is on a private host (%s); it is allowed only on a private network: serve --allow-private-networks", field, u.Hostname())
	}
	return u, nil
}

// checkCredentials checks a front's credentials: printable values, and
// header names that are tokens and not ones the forwarding sets itself.
func checkCredentials(c switchboard.FrontCredentials) error {
	if len(c.Headers) > MaxCredentialHeaders {
		return switchboard.Errorf(switchboard.EINVALID, "at most %d headers", MaxCredentialHeaders)
	}
	if !headerValue(c.Bearer) || len(c.Bearer) > 4096 {
		return switchboard.Errorf(switchboard.EINVALID, "bearer must be printable text of at most 4096 characters")
	}
	for k, v := range c.Headers {
		switch ck := strings.ToLower(k); {
		case !headerName(k):
			return switchboard.Errorf(switchboard.EINVALID, "header name %q is not a token", truncate(k, 40))
		case ck == "authorization" || ck == "host" || ck == "content-type" || ck == "content-length" ||
			ck == "a2a-version" || ck == "x-a2a-peer" || ck == "user-agent" || ck == "cookie" ||
			ck == "transfer-encoding" || ck == "connection" || strings.HasPrefix(ck, "sec-"):
			return switchboard.Errorf(switchboard.EINVALID, "header %s is set by the front itself (the bearer goes in \"bearer\")", k)
		case !headerValue(v) || len(v) > 4096:
			return switchboard.Errorf(switchboard.EINVALID, "header %s: the value must be printable text of at most 4096 characters", k)
		}
	}
	return nil
}

func headerName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

func headerValue(s string) bool {
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
