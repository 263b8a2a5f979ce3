package oauthhttp

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/mcpauth"
	"github.com/switchboard-dev/switchboard/pairing"
)

// mcpEndpointOf returns the MCP endpoint an OAuth route's path is about:
// the agent's ({address}/oauth/…), whose MCP must be served, or the
// account endpoint (/oauth/…). It answers 404 itself when there is none.
// The routes that call it are served only with MCP's OAuth.
func (s *Face) mcpEndpointOf(w http.ResponseWriter, r *http.Request) (mcpauth.Endpoint, bool) {
	if r.PathValue("handle") == "" {
		return mcpauth.Endpoint{Resource: s.BaseURL(r) + "/mcp"}, true
	}
	agent, ok := s.MCPAgent(w, r)
	if !ok {
		return mcpauth.Endpoint{}, false
	}
	return mcpauth.Endpoint{AgentID: agent.ID, Resource: s.ReachedBase(r, agent) + "/mcp"}, true
}

// handleOAuthRegister serves POST {address}/oauth/register and POST
// /oauth/register: dynamic client registration for MCP clients.
func (s *Face) handleOAuthRegister(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.mcpEndpointOf(w, r); !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(httpapi.UnwrapRecorder(w), r.Body, mcpauth.MaxRegistrationBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			err = switchboard.Errorf(switchboard.ETOOLARGE, "the body is larger than %d bytes", mcpauth.MaxRegistrationBody)
			httpapi.WriteJSON(w, http.StatusRequestEntityTooLarge, oauthErrorBody{Error: pairing.ErrInvalidRequest, Description: switchboard.ErrorMessage(err)})
			return
		}
		s.writeOAuthError(w, r, switchboard.Errorf(switchboard.EINVALID, "the body could not be read"))
		return
	}
	c, err := s.OAuth.Register(r.Context(), body, s.ClientKey(r))
	if switchboard.ErrorCode(err) == switchboard.EQUOTA {
		err = &pairing.Error{Code: "temporarily_unavailable", Description: switchboard.ErrorMessage(err),
			Status: http.StatusServiceUnavailable, RetryAfter: 10 * time.Minute}
	}
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, &oauthex.ClientRegistrationResponse{ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt,
		ClientRegistrationMetadata: oauthex.ClientRegistrationMetadata{ClientName: c.Name, RedirectURIs: c.RedirectURIs,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			TokenEndpointAuthMethod: "none", ApplicationType: c.ApplicationType}})
}

// mcpTokenAnswer is the answer of an authorization code or refresh token
// grant: the MCP token expires after expires_in seconds, and the client
// refreshes it with the refresh token.
type mcpTokenAnswer struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// allowTokenRequest counts a request to a token or revocation endpoint
// against its address (clientaddr.Key), in one count with pairing's
// polls (pairing.DefaultPollsPerMinute in a default deployment), and
// answers 429 slow_down itself past it.
func (s *Face) allowTokenRequest(w http.ResponseWriter, r *http.Request) bool {
	if ok, retry, _ := s.polls.Allow(r.Context(), "pairing-poll/"+s.ClientKey(r)); !ok {
		s.writeOAuthError(w, r, &pairing.Error{Code: pairing.ErrSlowDown, Description: "too many token requests from your address",
			Status: http.StatusTooManyRequests, RetryAfter: max(retry, time.Second)})
		return false
	}
	return true
}

// handleMCPGrant answers a token request of grant type
// authorization_code or refresh_token: an MCP token for the endpoint of
// the path. Token requests are counted per address (allowTokenRequest).
func (s *Face) handleMCPGrant(w http.ResponseWriter, r *http.Request, form url.Values) {
	ep, ok := s.mcpEndpointOf(w, r)
	if !ok || !s.allowTokenRequest(w, r) {
		return
	}
	var pair *mcpauth.TokenPair
	var err error
	if form.Get("grant_type") == "authorization_code" {
		pair, err = s.OAuth.Exchange(r.Context(), form, ep)
	} else {
		pair, err = s.OAuth.Refresh(r.Context(), form, ep)
	}
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	s.recordMCPGrantToken(r, ep, form, pair)
	w.Header().Set("Pragma", "no-cache")
	httpapi.WriteJSON(w, http.StatusOK, mcpTokenAnswer{AccessToken: pair.AccessToken, TokenType: "Bearer", ExpiresIn: int(pair.ExpiresIn.Seconds()),
		RefreshToken: pair.RefreshToken, Scope: mcpauth.Scope})
}

// handleOAuthRevoke serves POST {address}/oauth/revoke and POST
// /oauth/revoke (RFC 7009): the grant of the token (a refresh token or
// its MCP token) ends. Any token, known or not, is answered 200. Its
// requests count against the address with the token requests
// (allowTokenRequest): each costs the store a lookup, as they do.
func (s *Face) handleOAuthRevoke(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.mcpEndpointOf(w, r); !ok || !s.allowTokenRequest(w, r) {
		return
	}
	form, err := readOAuthForm(w, r)
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	grant, err := s.OAuth.RevokeGrant(r.Context(), form.Get("token"))
	if grant != nil || err != nil {
		// Only a grant that was there, or a failure, is a change to record.
		var acct string
		if grant != nil {
			acct = grant.Target.AccountID
		}
		e := audit.Entry(nil, s.Clients.Addr(r), switchboard.AuditMCPGrantRevoke, httpapi.GrantTarget(acct, grant, ""), err)
		if grant != nil {
			e.ActorKind, e.ActorID = switchboard.AuditMCPClient, grant.ClientID
		}
		s.Audit.Record(r.Context(), e)
	}
	if err != nil {
		s.writeOAuthError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, struct{}{})
}

// handleMCPResourceMetadata serves the RFC 9728 metadata of an MCP
// endpoint, by well-known path insertion: of {base}/a/{handle}/mcp at
// /.well-known/oauth-protected-resource/a/{handle}/mcp (its
// authorization server is the address), of https://{domain}/mcp at
// https://{domain}/.well-known/oauth-protected-resource/mcp (its
// authorization server is the domain), of {base}/mcp at
// /.well-known/oauth-protected-resource/mcp (its authorization server is
// the base).
func (s *Face) handleMCPResourceMetadata(w http.ResponseWriter, r *http.Request) {
	ep, ok := s.mcpEndpointOf(w, r)
	if !ok {
		return
	}
	issuer, name := s.BaseURL(r), "Switchboard account"
	if h := r.PathValue("handle"); h != "" {
		issuer, name = strings.TrimSuffix(ep.Resource, "/mcp"), "Switchboard agent "+strings.ToLower(h)
	}
	httpapi.SetCORS(w)
	s.VaryForwarded(w)
	httpapi.WriteJSON(w, http.StatusOK, &oauthex.ProtectedResourceMetadata{Resource: ep.Resource, AuthorizationServers: []string{issuer},
		BearerMethodsSupported: []string{"header"}, ScopesSupported: []string{mcpauth.Scope}, ResourceName: name})
}

// recordMCPGrantToken records the MCP token an MCP client took with a
// code (issued) or a refresh token (rotated) at the endpoint ep.
func (s *Face) recordMCPGrantToken(r *http.Request, ep mcpauth.Endpoint, form url.Values, pair *mcpauth.TokenPair) {
	action, opens := switchboard.AuditTokenIssue, "account endpoint"
	if form.Get("grant_type") != "authorization_code" {
		action = switchboard.AuditTokenRotate
	}
	var account string
	if ep.AgentID != "" {
		opens = "agent " + ep.AgentID
		if g, err := s.Agents.FindAgentByID(r.Context(), ep.AgentID); err == nil {
			account, opens = g.AccountID, "agent "+g.Handle
		}
	}
	e := audit.Entry(nil, s.Clients.Addr(r), action, audit.Token(account, switchboard.TokenMCP, pair.Label, opens+", by OAuth"), nil)
	e.ActorKind, e.ActorID = switchboard.AuditMCPClient, form.Get("client_id")
	s.Audit.Record(r.Context(), e)
}
