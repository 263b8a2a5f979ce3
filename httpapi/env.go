package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/clientaddr"
	"github.com/switchboard-dev/switchboard/domainname"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// Env is what every face needs: the configuration, the stores that say who
// a caller is, and the answers every face gives the same way (errors, JSON
// bodies, addresses, the audit record). Each face embeds one; all of it is
// immutable after NewEnv.
type Env struct {
	Cfg      Config
	Logger   *slog.Logger
	Accounts switchboard.AccountStore
	Agents   switchboard.AgentStore
	Tokens   switchboard.TokenStore
	// Audit records the security-relevant changes made through the API
	// (docs/operating.md, "Audit log"); never nil: NewEnv puts in a log
	// that keeps nothing when EnvDeps.Audit is nil.
	Audit switchboard.AuditLog
	// Clients tells the address a request came from (Config.TrustedProxies).
	Clients *clientaddr.Resolver
	// URLs names the deployment's and its agents' public URLs.
	URLs publicurl.Resolver

	// Closing is done once CloseStreams is called: SSE streams end, and
	// so do the waits of blocking calls.
	Closing context.Context

	errLogs      *rateLimitedLogger
	requests     *requestMetrics
	closeStreams context.CancelFunc
}

// EnvDeps are the stores and services every face uses.
type EnvDeps struct {
	Logger   *slog.Logger
	Accounts switchboard.AccountStore
	Agents   switchboard.AgentStore
	Tokens   switchboard.TokenStore
	// Audit records the security-relevant changes; nil: nothing is.
	Audit switchboard.AuditLog
}

// NewEnv returns the environment of the faces of one server, with cfg's
// zero values filled in with the defaults.
func NewEnv(deps EnvDeps, cfg Config) *Env {
	cfg = cfg.withDefaults()
	if deps.Audit == nil {
		deps.Audit = noAudit{}
	}
	closing, closeStreams := context.WithCancel(context.Background())
	return &Env{Closing: closing, closeStreams: closeStreams, requests: newRequestMetrics(), Cfg: cfg, Logger: deps.Logger, Accounts: deps.Accounts, Agents: deps.Agents, Tokens: deps.Tokens, Audit: deps.Audit,
		Clients: clientaddr.New(cfg.TrustedProxies), errLogs: newRateLimitedLogger(deps.Logger, time.Second),
		URLs: publicurl.Resolver{PublicURL: cfg.PublicURL, TrustForwarded: cfg.TrustForwarded, Domains: cfg.DeploymentDomains, Agents: deps.Agents}}
}

// CloseStreams ends every open SSE stream, so that a graceful shutdown does
// not wait for streams that would otherwise last as long as their task.
// Clients resume with Last-Event-ID on another instance or after a restart.
func (s *Env) CloseStreams() { s.closeStreams() }

// noAudit is the audit log of a server that records nothing.
type noAudit struct{}

// Record implements switchboard.AuditLog: it does nothing.
func (noAudit) Record(context.Context, switchboard.AuditEntry) {}

// withDefaults returns cfg with its zero values replaced by the defaults.
func (cfg Config) withDefaults() Config {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.StreamKeepAlive <= 0 {
		cfg.StreamKeepAlive = DefaultStreamKeepAlive
	}
	if cfg.StreamMaxDuration <= 0 {
		cfg.StreamMaxDuration = DefaultStreamMaxDuration
	}
	if cfg.MaxStreamsPerPeer <= 0 {
		cfg.MaxStreamsPerPeer = DefaultMaxStreamsPerPeer
	}
	if cfg.StoreCheckInterval <= 0 {
		cfg.StoreCheckInterval = DefaultStoreCheckInterval
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.MaxDomainsPerAccount == 0 {
		cfg.MaxDomainsPerAccount = DefaultMaxDomainsPerAccount
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	cfg.DeploymentDomains = ownDomains(cfg.DeploymentDomains)
	return cfg
}

// WriteError writes err as an owner-API error with the status of its code.
// Internal errors are logged and shown as "internal error".
func (s *Env) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := switchboard.ErrorCode(err)
	if code == switchboard.EINTERNAL {
		s.LogInternal(r, err)
	}
	s.Unavailable(w, err)
	if code == switchboard.EUNAUTHORIZED && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`) // a 401 says how to authenticate
	}
	if code == switchboard.ENOAGENT {
		WriteJSON(w, HTTPStatus(code), ownerapi.Error{Error: string(switchboard.ENOAGENT), Reason: switchboard.ErrorMessage(err)})
		return
	}
	WriteJSON(w, HTTPStatus(code), ownerapi.Error{Error: switchboard.ErrorMessage(err)})
}

// LogInternal logs an unexpected error. Errors caused by the client going
// away are not errors of ours and are logged at debug level.
func (s *Env) LogInternal(r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(r.Context().Err(), context.Canceled) {
		s.Logger.Debug("request ended by client", "method", r.Method, "path", r.URL.Path, "err", err)
		return
	}
	s.errLogs.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
}

// DecodeJSON reads a JSON request body of at most MaxBody bytes into v.
func (s *Env) DecodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(UnwrapRecorder(w), r.Body, s.Cfg.MaxBody)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && drainBody(io.MultiReader(dec.Buffered(), r.Body), s.Cfg.MaxBody) {
		return switchboard.Errorf(switchboard.EINVALID, "invalid JSON body: more after the JSON value")
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return switchboard.Errorf(switchboard.ETOOLARGE, "request body is larger than %d bytes", s.Cfg.MaxBody)
		}
		return switchboard.Errorf(switchboard.EINVALID, "invalid JSON body: %s", err.Error())
	}
	return nil
}

func (s *Env) NotFound(w http.ResponseWriter, r *http.Request) {
	WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "not found"})
}

// WriteJSON writes v as the JSON response with the given status, giving up
// on a client that does not read it within WriteTimeout.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	startJSON(w, status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteJSONBody is WriteJSON for a body already encoded.
func WriteJSONBody(w http.ResponseWriter, status int, body []byte) {
	startJSON(w, status)
	_, _ = w.Write(body)
}

// startJSON sets the write deadline and headers of a JSON response and
// writes its status.
func startJSON(w http.ResponseWriter, status int) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(WriteTimeout))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
}

// Unavailable prepares the answer to an error whose code is EUNAVAILABLE:
// it sets Retry-After and logs the cause (at most once a second), which
// the answer does not show. It reports whether err is such an error.
func (s *Env) Unavailable(w http.ResponseWriter, err error) bool {
	if switchboard.ErrorCode(err) != switchboard.EUNAVAILABLE {
		return false
	}
	w.Header().Set("Retry-After", unavailableRetry)
	s.errLogs.Error("refused work: the store cannot write", "err", err)
	return true
}

// FindToken returns the active token of the given kind that the request
// presents. A token of another kind is treated exactly like no token.
func (s *Env) FindToken(ctx context.Context, r *http.Request, kind switchboard.TokenKind) (*switchboard.Token, error) {
	secret := BearerToken(r)
	if secret == "" {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "send Authorization: Bearer <token>")
	}
	tok, err := s.Tokens.FindTokenByHash(ctx, switchboard.HashToken(secret))
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND || (err == nil && tok.Kind != kind) {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "the bearer token is not valid (revoked, rotated or mistyped)")
	}
	return tok, err
}

// Owner wraps h so that it runs only for a request with a valid owner token
// of an enabled account.
func (s *Env) Owner(h OwnerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		acct, err := s.AuthenticateOwner(r)
		if err != nil {
			if switchboard.ErrorCode(err) == switchboard.EUNAUTHORIZED {
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			}
			s.WriteError(w, r, err)
			return
		}
		h(w, r, acct)
	}
}

// Operator wraps h so that it runs only for the operator account.
func (s *Env) Operator(h OwnerHandler) http.HandlerFunc {
	return s.Owner(func(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
		if !acct.IsOperator() {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EFORBIDDEN, "only the operator may %s", operatorAct(r)))
			return
		}
		h(w, r, acct)
	})
}

func (s *Env) AuthenticateOwner(r *http.Request) (*switchboard.Account, error) {
	tok, err := s.FindToken(r.Context(), r, switchboard.TokenOwner)
	if err != nil {
		return nil, err
	}
	acct, err := s.Accounts.FindAccountByID(r.Context(), tok.AccountID)
	if err != nil {
		return nil, err
	}
	if acct.Disabled {
		return nil, switchboard.Errorf(switchboard.EFORBIDDEN, "account %q is disabled", acct.Name)
	}
	MarkAuthenticated(r)
	return acct, nil
}

// AgentOfToken returns the agent of an agent token: EUNAUTHORIZED when it
// is gone, EFORBIDDEN when its account is disabled.
func (s *Env) AgentOfToken(r *http.Request, tok *switchboard.Token) (*switchboard.Agent, error) {
	g, err := s.Agents.FindAgentByID(r.Context(), tok.AgentID)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, ErrBadToken
	} else if err != nil {
		return nil, err
	}
	if g.AccountDisabled {
		return nil, switchboard.Errorf(switchboard.EFORBIDDEN, "the agent's account is disabled")
	}
	MarkAuthenticated(r)
	return g, nil
}

// AuthenticateOwnerOrAgent returns the account of an owner token or the
// agent of an agent token, whichever the request presents (exactly one is
// set).
func (s *Env) AuthenticateOwnerOrAgent(r *http.Request) (*switchboard.Account, *switchboard.Agent, error) {
	secret := BearerToken(r)
	if secret == "" {
		return nil, nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "send Authorization: Bearer <token>")
	}
	tok, err := s.Tokens.FindTokenByHash(r.Context(), switchboard.HashToken(secret))
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		return nil, nil, ErrBadToken
	case err != nil:
		return nil, nil, err
	case tok.Kind == switchboard.TokenAgent:
		g, err := s.AgentOfToken(r, tok)
		return nil, g, err
	case tok.Kind == switchboard.TokenOwner:
		acct, err := s.AuthenticateOwner(r)
		return acct, nil, err
	}
	return nil, nil, ErrBadToken
}

// StillActive looks the token up again: ok false when it was revoked, a
// nil token with ok true when the store could not tell.
func (s *Env) StillActive(ctx context.Context, hash string) (*switchboard.Token, bool) {
	tok, err := s.Tokens.FindTokenByHash(ctx, hash)
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil, false
	} else if err != nil {
		return nil, true
	}
	return tok, true
}

// ErrBadToken is the refusal of a credential that does not open the
// address: the same for a missing, revoked or misplaced token.
var ErrBadToken = switchboard.Errorf(switchboard.EUNAUTHORIZED, "the bearer token is not valid (revoked, rotated or mistyped)")

// VaryForwarded adds the headers a request-derived URL depends on to Vary.
func (s *Env) VaryForwarded(w http.ResponseWriter) { s.URLs.Vary(w) }

// ReachedAddress returns the URL of the agent's address as the request reached
// it: the root of its agent domain, https://{domain}/, on that domain
// (AgentDomains); {base}/ for the default agent on root paths; else
// {base}/a/{handle}, even for an agent with a domain, so that what a card,
// an OAuth issuer or a resource's metadata names is where the client
// fetched it (RFC 8414 and RFC 9728 require it).
func (s *Env) ReachedAddress(r *http.Request, agent *switchboard.Agent) string {
	if d := publicurl.AgentDomain(r); d != "" && d == agent.Domain {
		return s.URLs.DomainBase(r, d) + "/"
	}
	if r.PathValue("handle") == "" && agent.Handle == s.Cfg.DefaultAgent {
		return s.BaseURL(r) + "/"
	}
	return s.BaseURL(r) + "/a/" + agent.Handle
}

// BaseURL returns the URL the world reaches this server at, for the
// request: the public URL, or one derived from the request. The console
// takes its origin from it.
func (s *Env) BaseURL(r *http.Request) string { return s.URLs.Base(r) }

// AddressURL returns an agent's address: the root of its domain when it
// has one, else {base}/a/{handle}, with the base taken from the
// configuration or from r (publicurl.Resolver.Address). The owner API,
// the directory and the console name it.
func (s *Env) AddressURL(r *http.Request, agent *switchboard.Agent) string {
	return s.URLs.Address(r, agent)
}

// ReachedBase returns the agent's address as the request reached it,
// without a trailing slash: {base}/a/{handle}, or {base} for the default
// agent at the root. It is the OAuth issuer and the prefix of the pairing
// endpoints.
func (s *Env) ReachedBase(r *http.Request, agent *switchboard.Agent) string {
	return strings.TrimSuffix(s.ReachedAddress(r, agent), "/")
}

// ResourceMetadataURL returns where the agent's RFC 9728 metadata is, by
// the well-known path insertion of RFC 9728 section 3.1: at the root of
// the host when the address is a host's root (an agent domain, the
// default agent's), else with the address's path inserted.
func (s *Env) ResourceMetadataURL(r *http.Request, agent *switchboard.Agent) string {
	addr := s.ReachedAddress(r, agent)
	if strings.HasSuffix(addr, "/") {
		return strings.TrimSuffix(addr, "/") + "/.well-known/oauth-protected-resource"
	}
	return s.BaseURL(r) + "/.well-known/oauth-protected-resource/a/" + agent.Handle
}

// ClientKey returns what per-address limits count a request under, and
// records as where it came from: the address of the connection's peer, or
// of the client a trusted proxy forwarded for (Config.TrustedProxies), an
// IPv6 one's /64 (clientaddr.Key).
func (s *Env) ClientKey(r *http.Request) string { return clientaddr.Key(s.Clients.Addr(r)) }

// Record adds an entry of action by acct on t to the audit log, from the
// request's client address, its outcome read from err.
func (s *Env) Record(r *http.Request, acct *switchboard.Account, action switchboard.AuditAction, t audit.Target, err error) {
	s.Audit.Record(r.Context(), audit.Entry(acct, s.Clients.Addr(r), action, t, err))
}

// AgentFromPath finds the agent named by the {handle} of the path, or by the
// default-agent setting on root paths. It answers 404 itself when there is
// none, or when its account is disabled.
func (s *Env) AgentFromPath(w http.ResponseWriter, r *http.Request) (*switchboard.Agent, bool) {
	handle := r.PathValue("handle")
	if handle == "" {
		handle = s.Cfg.DefaultAgent
	}
	if handle == "" {
		s.NotFound(w, r)
		return nil, false
	}
	agent, err := s.Agents.FindAgentByHandle(r.Context(), strings.ToLower(handle))
	if err == nil && agent.AccountDisabled {
		err = switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
			WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "no agent at this address"})
		} else {
			s.WriteError(w, r, err)
		}
		return nil, false
	}
	return agent, true
}

// ReadBody reads the request body, refusing one over MaxBody: first by its
// declared length, then by what actually arrives.
func (s *Env) ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	tooLarge := switchboard.Errorf(switchboard.ETOOLARGE, "body too large: the limit is %d bytes", s.Cfg.MaxBody)
	if r.ContentLength > s.Cfg.MaxBody {
		return nil, tooLarge
	}
	body, err := readAll(http.MaxBytesReader(UnwrapRecorder(w), r.Body, s.Cfg.MaxBody), r.ContentLength)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge
	} else if err != nil {
		return nil, switchboard.Errorf(switchboard.EINVALID, "read body: %s", err.Error())
	}
	return body, nil
}

// readAll reads r to its end into a buffer made for size bytes (the
// declared length, when there is one), not grown from 512 bytes as
// io.ReadAll would grow it. At most presizeLimit is made before the bytes
// arrive: a declared length costs the client nothing to send.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	size = min(size, presizeLimit)
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead)) // room to see the end without growing
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

// presizeLimit bounds the buffer readAll makes for a declared length.
const presizeLimit = 64 << 10

// SetCORS lets browser-based A2A clients call addresses. Credentials are
// bearer tokens, never cookies, so any origin may send them.
func SetCORS(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, A2A-Version, A2A-Extensions, X-A2A-Extensions, Last-Event-ID")
	h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Retry-After")
	h.Set("Access-Control-Max-Age", "600")
}

// GrantTarget is the audit log's target of an MCP client's grant: its
// token's label, the client in the detail; g may be nil (label then names
// it).
func GrantTarget(accountID string, g *switchboard.OAuthGrant, label string) audit.Target {
	t := audit.Target{AccountID: accountID, Kind: audit.KindGrant, ID: label}
	if g != nil {
		t.ID, t.Detail = g.Label, "client "+g.ClientID
		if g.ClientName != "" {
			t.Detail += " (" + g.ClientName + ")"
		}
	}
	return t
}

// MCPAgent finds the agent whose MCP endpoint r's path names ({address}/mcp
// or {address}/oauth/…). When there is none (no such agent, its account
// disabled, its owner turned MCP off) it answers 404 itself and returns
// false.
func (s *Env) MCPAgent(w http.ResponseWriter, r *http.Request) (*switchboard.Agent, bool) {
	agent, err := s.Agents.FindAgentByHandle(r.Context(), strings.ToLower(r.PathValue("handle")))
	if err == nil && (agent.AccountDisabled || agent.MCPOff) {
		err = switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	switch {
	case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		WriteJSON(w, http.StatusNotFound, ownerapi.Error{Error: "no MCP endpoint at this address"})
	case err != nil:
		s.WriteError(w, r, err)
	default:
		return agent, true
	}
	return nil, false
}

// OwnedAgent finds the agent named by the {ref} of the path (an id or a
// handle) if the account may manage it. Another owner's agent is reported
// as not found, exactly like a missing one.
func (s *Env) OwnedAgent(r *http.Request, acct *switchboard.Account) (*switchboard.Agent, error) {
	return s.AgentByRef(r, acct, r.PathValue("ref"))
}

// AgentByRef finds the agent ref names (an id or a handle) if the account
// may manage it; another owner's agent is not found.
func (s *Env) AgentByRef(r *http.Request, acct *switchboard.Account, ref string) (*switchboard.Agent, error) {
	var g *switchboard.Agent
	var err error
	if switchboard.IsUUID(ref) {
		g, err = s.Agents.FindAgentByID(r.Context(), strings.ToLower(ref))
	} else {
		g, err = s.Agents.FindAgentByHandle(r.Context(), strings.ToLower(ref))
	}
	if err != nil {
		return nil, err
	}
	if !acct.IsOperator() && g.AccountID != acct.ID {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "agent not found")
	}
	return g, nil
}

// NonNilSkills returns s, or an empty list for nil (JSON [] rather than
// null).
func NonNilSkills(s []a2a.AgentSkill) []a2a.AgentSkill {
	if s == nil {
		return []a2a.AgentSkill{}
	}
	return s
}

// MCPURL is an agent's MCP endpoint: its address plus /mcp.
func (s *Env) MCPURL(r *http.Request, g *switchboard.Agent) string {
	return s.AddressURL(r, g) + "/mcp"
}

// ownDomains returns the deployment's own domains as domainname holds
// names (a name that is none is kept lower-cased, so that it is still
// refused to agents).
func ownDomains(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if d, err := domainname.Normalize(n); err == nil {
			out = append(out, d)
		} else if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			out = append(out, strings.TrimSuffix(n, "."))
		}
	}
	return out
}

// CommunityURL returns a community's address, {base}/c/{name}.
func (s *Env) CommunityURL(r *http.Request, name string) string {
	return s.BaseURL(r) + "/c/" + name
}
