package mcpauth

import (
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/pairing"
)

// Bounds of Client ID Metadata Documents.
const (
	// MaxClientIDURL is the longest client_id URL, in bytes.
	MaxClientIDURL = 512
	// MaxClientDocument is the largest metadata document read, in bytes.
	MaxClientDocument = 5120
	// MaxDocumentRedirectURIs is the most redirect URIs a document may list.
	MaxDocumentRedirectURIs = 10
)

// IsDocumentClientID reports whether a client_id names a Client ID
// Metadata Document (an https URL) rather than a registered client.
func IsDocumentClientID(id string) bool {
	return len(id) > len("https://") && strings.EqualFold(id[:len("https://")], "https://")
}

// CheckClientIDURL checks a client_id URL before it is fetched: https, at
// most MaxClientIDURL bytes, a host, no user information, no fragment,
// a path other than "/" with no "." or ".." segment; not a
// private host by its name (netguard.PrivateHost) unless allowPrivate;
// and not ownHost, this deployment's host (host:port, as its public URL
// names it). What the name resolves to is checked when it is fetched.
func CheckClientIDURL(raw, ownHost string, allowPrivate bool) error {
	if len(raw) > MaxClientIDURL {
		return errors.New("the client_id URL is longer than 512 bytes")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !strings.HasPrefix(raw, "https://") || u.Opaque != "" || u.Host == "":
		return errors.New("the client_id is not an https URL")
	case u.User != nil:
		return errors.New("the client_id URL holds user information")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("the client_id URL has a fragment")
	case u.Path == "" || u.Path == "/":
		return errors.New("the client_id URL has no path")
	case strings.Contains(u.Hostname(), "%"):
		return errors.New("the client_id URL names an interface")
	}
	for seg := range strings.SplitSeq(u.EscapedPath()[1:], "/") {
		if d, err := url.PathUnescape(seg); err != nil || d == "." || d == ".." {
			return errors.New("the client_id URL has a . or .. path segment")
		}
	}
	if !allowPrivate && netguard.PrivateHost(u.Hostname()) {
		return errors.New("the client_id URL names a private host")
	}
	if ownHost != "" && hostPort(u) == ownHost {
		return errors.New("the client_id URL names this server")
	}
	return nil
}

// hostPort is a URL's host with its port, the scheme's default where it
// has none, lower case.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}

// OwnHost returns the host:port of an URL of this deployment (its MCP
// resource, say), as CheckClientIDURL compares it.
func OwnHost(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return ""
	}
	return hostPort(u)
}

// ParseClientDocument checks the Client ID Metadata Document fetched from
// clientID: a JSON object whose client_id equals clientID exactly, with
// 1 to MaxDocumentRedirectURIs redirect_uris (CheckRedirectURI),
// token_endpoint_auth_method none (or absent), no client_secret, and
// grant_types (if present) holding authorization_code. The claimed
// client_name is cleaned as a registration's is. Errors are
// *pairing.Error with the codes of RFC 7591; they name the rule broken,
// for the log, not for the client.
func ParseClientDocument(body []byte, clientID string) (*Registration, error) {
	// Members are read by their exact names (encoding/json would match
	// a struct's fields regardless of case).
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, metadataError("the document is not a JSON object")
	}
	var id, name, method string
	var redirects, grants []string
	for _, f := range []struct {
		key string
		dst any
	}{{"client_id", &id}, {"client_name", &name}, {"token_endpoint_auth_method", &method},
		{"redirect_uris", &redirects}, {"grant_types", &grants}} {
		if raw, ok := fields[f.key]; ok {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return nil, metadataError(f.key + " has the wrong type")
			}
		}
	}
	_, hasMethod := fields["token_endpoint_auth_method"]
	_, hasGrants := fields["grant_types"]
	_, hasSecret := fields["client_secret"]
	switch {
	case id != clientID:
		return nil, metadataError("the document's client_id is not its URL")
	case hasSecret:
		return nil, metadataError("the document holds a client_secret")
	case hasMethod && method != "none":
		return nil, metadataError("token_endpoint_auth_method must be none")
	case hasGrants && !slices.Contains(grants, "authorization_code"):
		return nil, metadataError("grant_types must hold authorization_code")
	case len(redirects) < 1 || len(redirects) > MaxDocumentRedirectURIs:
		return nil, &pairing.Error{Code: ErrInvalidRedirectURI, Description: "redirect_uris must hold 1 to 10 URIs"}
	}
	for _, u := range redirects {
		if err := CheckRedirectURI(u); err != nil {
			return nil, &pairing.Error{Code: ErrInvalidRedirectURI, Description: err.Error()}
		}
	}
	if name = pairing.CleanText(name); name == "" {
		name = "MCP client"
	}
	return &Registration{Name: name, RedirectURIs: redirects, ApplicationType: "native"}, nil
}
