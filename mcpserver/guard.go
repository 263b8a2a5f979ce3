package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// Codes of the JSON-RPC errors this package writes before the SDK reads
// the request (the SDK writes the same codes for what it checks).
const (
	CodeHeaderMismatch             = -32020
	CodeUnsupportedProtocolVersion = -32022
	codeRateLimited                = -32029
	codeUnauthorized               = -32001
	codeInternal                   = -32603
)

// target is what a request is about: the agent whose endpoint it called
// (nil on the account endpoint, until a tool names one) and the public
// base URL of the deployment.
type target struct {
	agent *switchboard.Agent
	base  string
	// domain is the base URL of the agent domain the request reached
	// (https://{domain}), or "" at {base}/a/{handle}/mcp.
	domain string
}

// ServeAgent serves POST {address}/mcp for the agent, which the caller has
// found and checked is served (its account enabled, its MCP on). base is
// the deployment's public base URL: a browser's Origin must be its
// origin. It answers:
//   - a method other than POST: 405 with Allow: POST;
//   - a query parameter whose name holds "token" or "auth": 400 (tokens
//     are never taken from a URL);
//   - an Origin header other than base's origin: 403;
//   - no MCP token of this agent: 401 with a WWW-Authenticate challenge;
//   - past the rate limit of the token: 429 with Retry-After;
//   - an MCP-Protocol-Version that is not served: 400 with JSON-RPC
//     error -32022 and the versions served;
//
// and hands anything else to the SDK's stateless Streamable HTTP handler.
//
// At the root of the agent's domain (publicurl.AgentDomain), the
// challenge names the metadata of https://{domain}/mcp.
func (s *Server) ServeAgent(w http.ResponseWriter, r *http.Request, agent *switchboard.Agent, base string) {
	tg := &target{agent: agent, base: strings.TrimRight(base, "/")}
	if d := publicurl.AgentDomain(r); d != "" && d == agent.Domain {
		tg.domain = publicurl.DomainAt(tg.base, d)
	}
	s.serve(w, r, tg, s.handler)
}

// ServeAccount serves POST {base}/mcp, the account endpoint: the same
// checks as ServeAgent, for an account MCP token, whose tools name the
// agent they act for (one of the token's) and may create one agent.
func (s *Server) ServeAccount(w http.ResponseWriter, r *http.Request, base string) {
	s.serve(w, r, &target{base: strings.TrimRight(base, "/")}, s.acctHandler)
}

// serve makes the checks of ServeAgent for the target (an agent, or no
// agent for the account endpoint) and hands the request to next.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, tg *target, next http.Handler) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "the MCP endpoint takes POST only", http.StatusMethodNotAllowed)
		return
	}
	if credentialInQuery(r.URL.RawQuery) {
		http.Error(w, "send the token in the Authorization header, never in the URL", http.StatusBadRequest)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, tg.base) {
		http.Error(w, "this Origin may not call the MCP endpoint", http.StatusForbidden)
		return
	}
	info, err := s.authenticate(r, tg)
	if err != nil {
		if errors.Is(err, auth.ErrInvalidToken) {
			w.Header().Set("WWW-Authenticate", s.challenge(tg, r.Header.Get("Authorization") != ""))
			writeRPCError(w, http.StatusUnauthorized, codeUnauthorized, err.Error(), nil)
			return
		}
		s.Logger.Error("mcp: look up a token", "err", err)
		writeRPCError(w, http.StatusInternalServerError, codeInternal, "internal error", nil)
		return
	}
	ctx := context.WithValue(r.Context(), infoKey{}, info)
	next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, clientAddrKey{}, s.clientAddr(r))))
}

// challenge is the WWW-Authenticate header of a 401 (RFC 6750 section 3):
// error="invalid_token" when a token was sent (none: no error, the client
// has yet to authenticate); with OAuth, the endpoint's protected resource
// metadata, by the well-known path insertion of RFC 9728 section 3.1, and
// the scope a token needs.
func (s *Server) challenge(tg *target, sent bool) string {
	c := `Bearer realm="switchboard"`
	if sent {
		c += `, error="invalid_token"`
	}
	if !s.cfg.OAuth {
		return c
	}
	md := tg.base + "/.well-known/oauth-protected-resource/mcp"
	if tg.domain != "" {
		md = tg.domain + "/.well-known/oauth-protected-resource/mcp"
	} else if tg.agent != nil {
		md = tg.base + "/.well-known/oauth-protected-resource/a/" + tg.agent.Handle + "/mcp"
	}
	return c + `, resource_metadata="` + md + `", scope="inbox"`
}

// credentialInQuery reports whether a raw query names a parameter that
// looks like a credential ("token", "auth", in any case, anywhere in the
// name). A query that does not parse is looked at as it is.
func credentialInQuery(raw string) bool {
	if raw == "" {
		return false
	}
	for part := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		name = strings.ToLower(name)
		if strings.Contains(name, "token") || strings.Contains(name, "auth") {
			return true
		}
	}
	return false
}

// sameOrigin reports whether the Origin header o is the origin of base
// (scheme and host, ports as written; the default port may be left out).
func sameOrigin(o, base string) bool {
	ou, err := url.Parse(o)
	if err != nil {
		return false
	}
	bu, err := url.Parse(base)
	if err != nil {
		return false
	}
	return strings.EqualFold(ou.Scheme, bu.Scheme) && strings.EqualFold(hostPort(ou), hostPort(bu)) && ou.Path == "" && ou.User == nil
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

// authenticate checks the request's token: an active MCP token of the
// agent the request is about. Any other token, of any kind, is refused
// exactly like a missing one (an error wrapping auth.ErrInvalidToken).
func (s *Server) authenticate(r *http.Request, tg *target) (*auth.TokenInfo, error) {
	invalid := fmt.Errorf("%w: send an MCP token of this agent (sbm_…) as Authorization: Bearer; this one is missing, revoked, mistyped or another kind of token", auth.ErrInvalidToken)
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return nil, invalid
	}
	tok, err := s.Tokens.FindTokenByHash(r.Context(), switchboard.HashToken(strings.TrimSpace(secret)))
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return nil, invalid
	case err != nil:
		return nil, fmt.Errorf("look up the token: %w", err)
	case tok.Kind != switchboard.TokenMCP:
		return nil, invalid
	case tg.agent != nil && tok.AgentID != tg.agent.ID:
		return nil, invalid
	case tg.agent == nil:
		// The account endpoint: an account token of an enabled account.
		if tok.AgentID != "" || s.Accounts == nil {
			return nil, invalid
		}
		acct, err := s.Accounts.FindAccountByID(r.Context(), tok.AccountID)
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && acct.Disabled) {
			return nil, invalid
		} else if err != nil {
			return nil, fmt.Errorf("look up the token's account: %w", err)
		}
	}
	if s.OnAuthenticated != nil {
		s.OnAuthenticated(r)
	}
	return &auth.TokenInfo{UserID: switchboard.TokenID(tok.Hash), Extra: map[string]any{extraTarget: tg, extraToken: tok}}, nil
}

type infoKey struct{}

// passOn is the SDK's token check, which ServeAgent made already: it hands
// the SDK the token's information, for the tools to read.
func passOn(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	if info, ok := ctx.Value(infoKey{}).(*auth.TokenInfo); ok {
		return info, nil
	}
	return nil, fmt.Errorf("%w: no MCP token", auth.ErrInvalidToken)
}

// Keys of auth.TokenInfo.Extra.
const (
	extraTarget = "switchboard.target"
	extraToken  = "switchboard.token"
)

// limit counts the request's first call against its token's rate limit
// (limitBatch counts the others of a batch, once the body is read, so
// that a request past the limit is refused unread) and records the
// token's use; it returns the limit's key of the token and reports
// whether the call may go on, having answered 429 if not.
func (s *Server) limit(w http.ResponseWriter, r *http.Request) (string, bool) {
	info := auth.TokenInfoFromContext(r.Context())
	tok, _ := info.Extra[extraToken].(*switchboard.Token)
	if tok == nil {
		http.Error(w, "no token", http.StatusUnauthorized)
		return "", false
	}
	key := limitKey(tok)
	if s.Limiter != nil {
		if ok, retry, _ := s.Limiter.Allow(r.Context(), key); !ok {
			secs := retryAfter(retry)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeRPCError(w, http.StatusTooManyRequests, codeRateLimited, rateLimitMessage(secs), nil)
			return "", false
		}
	}
	s.usage.Touch(r.Context(), tok.Hash)
	return key, true
}

// retryAfter is the Retry-After of a refusal: whole seconds, at least 1.
func retryAfter(retry time.Duration) int {
	return max(int(retry.Seconds()+0.999), 1)
}

// rateLimitMessage is the message of the rate limit's JSON-RPC error.
func rateLimitMessage(secs int) string {
	return fmt.Sprintf("rate limit: too many calls with this MCP grant; retry in %d s", secs)
}

// limitKey is the rate limit's key of an MCP token: its grant, the label
// on its agent (or account), which an OAuth refresh keeps while it
// replaces the token, so that refreshing does not start a new count.
func limitKey(tok *switchboard.Token) string {
	if tok.Label == "" {
		return "mcp/" + switchboard.TokenID(tok.Hash)
	}
	if tok.AgentID != "" {
		return "mcp/agent/" + tok.AgentID + "/" + tok.Label
	}
	return "mcp/account/" + tok.AccountID + "/" + tok.Label
}

// checkVersion answers -32022 (HTTP 400) to an MCP-Protocol-Version header
// that names a version not served, with the versions served; it reports
// whether the request may go on. The SDK would answer an unknown older
// version with plain text, and checks everything else about versions
// itself.
func checkVersion(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	if v == "" || slices.Contains(ProtocolVersions, v) {
		return true
	}
	writeRPCError(w, http.StatusBadRequest, CodeUnsupportedProtocolVersion,
		fmt.Sprintf("protocol version %q is not supported", v),
		map[string]any{"supported": ProtocolVersions, "requested": v})
	return false
}

// writeRPCError writes a JSON-RPC error without an id (the request was
// not read).
func writeRPCError(w http.ResponseWriter, status, code int, msg string, data any) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": e})
}
