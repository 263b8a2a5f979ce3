package mcpauth

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Request is a checked authorization request: its client is registered,
// or published its metadata document, and its redirect URI is one of the
// client's, so errors may be sent there.
type Request struct {
	Client *switchboard.OAuthClient
	// DocumentHost is the host that published the client's metadata
	// document (its client_id is that URL); empty for a registered
	// client.
	DocumentHost string
	RedirectURI  string
	State        string
	// Challenge is the PKCE S256 code challenge.
	Challenge string
	// Resource is the MCP URL the token will open.
	Resource string
}

// PageError refuses an authorization request on a page, without a
// redirect: the client is unknown, its metadata document could not be
// used, or the redirect URI is not its own.
type PageError struct {
	Message string
	// Status is the page's HTTP status (0: 400).
	Status int
}

// Error implements the error interface.
func (e *PageError) Error() string { return e.Message }

// RedirectError refuses an authorization request by sending the user
// back to the client with an OAuth error (RFC 6749 section 4.1.2.1).
type RedirectError struct {
	RedirectURI, State, Code, Description string
}

// Error implements the error interface.
func (e *RedirectError) Error() string { return e.Code + ": " + e.Description }

// URL is where the user is sent back: the redirect URI with error,
// error_description, state and iss (RFC 9207).
func (e *RedirectError) URL(issuer string) string {
	return RedirectWith(e.RedirectURI, url.Values{"error": {e.Code}, "error_description": {e.Description},
		"state": {e.State}, "iss": {issuer}})
}

// challengeRE is a PKCE S256 challenge: 43 base64url characters.
var challengeRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// CheckRequest checks an authorization request's parameters for the MCP
// endpoint resource (its URL), made from the address requester. A
// client_id that is an https URL is a client that published its metadata
// document there (Documents.Client); any other must be registered. An
// unknown client, a document that could not be used, or a redirect URI
// not the client's is a *PageError; then response_type must be code,
// PKCE S256 is required, resource (if given) must be the endpoint's URL
// and scope may hold only inbox and offline_access, else a
// *RedirectError.
func (s *Service) CheckRequest(ctx context.Context, q url.Values, resource, requester string) (*Request, error) {
	c, docHost, err := s.client(ctx, q.Get("client_id"), resource, requester)
	if err != nil {
		return nil, err
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if redirect == "" || !MatchRedirectURI(c.RedirectURIs, redirect) {
		return nil, &PageError{Message: "The address this request would return to is not one the application registered."}
	}
	fail := func(code, desc string) error {
		return &RedirectError{RedirectURI: redirect, State: q.Get("state"), Code: code, Description: desc}
	}
	switch {
	case q.Get("response_type") != "code":
		return nil, fail("unsupported_response_type", "response_type must be code")
	case q.Get("code_challenge_method") != "S256" || !challengeRE.MatchString(q.Get("code_challenge")):
		return nil, fail("invalid_request", "PKCE is required: code_challenge (43 characters) with code_challenge_method S256")
	case q.Get("resource") != "" && strings.TrimRight(q.Get("resource"), "/") != resource:
		return nil, fail("invalid_target", "resource must be "+resource)
	}
	for sc := range strings.FieldsSeq(q.Get("scope")) {
		if sc != Scope && sc != "offline_access" {
			return nil, fail("invalid_scope", "scope may hold only inbox and offline_access")
		}
	}
	return &Request{Client: c, DocumentHost: docHost, RedirectURI: redirect, State: q.Get("state"), Challenge: q.Get("code_challenge"), Resource: resource}, nil
}

// client finds the client of an authorization request: registered, or
// described by the metadata document at its client_id (and then the
// host that published it).
func (s *Service) client(ctx context.Context, id, resource, requester string) (*switchboard.OAuthClient, string, error) {
	if IsDocumentClientID(id) {
		c, err := s.Documents.Client(ctx, id, OwnHost(resource), requester)
		switch {
		case switchboard.ErrorCode(err) == switchboard.ERATELIMITED:
			return nil, "", &PageError{Message: "Too many applications were looked up from your address; try again in an hour.", Status: http.StatusTooManyRequests}
		case errors.Is(err, ErrClientDocument):
			return nil, "", &PageError{Message: "The application's client metadata document could not be used. Start again from the application, or tell its maker."}
		case err != nil:
			return nil, "", err
		}
		return c, hostOf(id), nil
	}
	c, err := s.Store.FindOAuthClient(ctx, id)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || id == "" {
		return nil, "", &PageError{Message: "This application is not registered here (unknown client_id). Start again from the application."}
	} else if err != nil {
		return nil, "", err
	}
	return c, "", nil
}

// Deny returns where a denied request sends the user: access_denied.
func Deny(req *Request, issuer string) string {
	e := &RedirectError{RedirectURI: req.RedirectURI, State: req.State, Code: "access_denied", Description: "the owner denied the request"}
	return e.URL(issuer)
}

// Approve issues an authorization code for the request, opening the
// target, and returns where the user is sent back: the redirect URI with
// code, state and iss. ECONFLICT when the target holds MaxGrants OAuth
// MCP tokens already.
func (s *Service) Approve(ctx context.Context, req *Request, tg switchboard.OAuthTarget, issuer string) (string, error) {
	labels, err := s.oauthLabels(ctx, tg)
	if err != nil {
		return "", err
	}
	if len(labels) >= MaxGrants {
		return "", switchboard.Errorf(switchboard.ECONFLICT, "at most %d applications may hold an MCP token here; revoke one first", MaxGrants)
	}
	now := s.now()
	if _, err := s.Store.DeleteOAuthCodes(ctx, now.Add(-CodeKeep)); err != nil {
		s.Logger.Warn("sweep expired authorization codes", "err", err)
	}
	code := "sbx_" + rand.Text() + rand.Text()
	err = s.Store.CreateOAuthCode(ctx, &switchboard.OAuthCode{Hash: switchboard.HashToken(code), ClientID: req.Client.ID, ClientName: req.Client.Name,
		RedirectURI: req.RedirectURI, Challenge: req.Challenge, Resource: req.Resource, Target: tg,
		Label: labelBase(req.Client.Name), CreatedAt: now, ExpiresAt: now.Add(CodeTTL)})
	if err != nil {
		return "", err
	}
	s.Logger.Info("mcp oauth consent", "client_id", req.Client.ID, "account_id", tg.AccountID, "agent_id", tg.AgentID)
	return RedirectWith(req.RedirectURI, url.Values{"code": {code}, "state": {req.State}, "iss": {issuer}}), nil
}
