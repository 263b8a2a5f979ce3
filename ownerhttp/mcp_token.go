package ownerhttp

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// DefaultMCPTokenLabel labels an MCP token minted without a label.
const DefaultMCPTokenLabel = "mcp"

// handleIssueMCPToken mints an MCP token for the agent: POST
// /agents/{ref}/mcp-tokens {label}. The secret is in this answer only; the
// store keeps its hash.
func (s *Face) handleIssueMCPToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var body ownerapi.MCPTokenIssue
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if body.Label == "" {
		body.Label = DefaultMCPTokenLabel
	}
	if !switchboard.ValidLabel(body.Label) {
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "label must be 1 to 64 letters, digits, '_' or '-'"))
		return
	}
	secret, hash := switchboard.NewToken(switchboard.TokenMCP)
	tok := &switchboard.Token{Hash: hash, Kind: switchboard.TokenMCP, AccountID: g.AccountID, AgentID: g.ID, Label: body.Label}
	err = s.Tokens.CreateToken(r.Context(), tok, false)
	s.Record(r, acct, switchboard.AuditTokenIssue, audit.Token(g.AccountID, switchboard.TokenMCP, body.Label, "agent "+g.Handle), err)
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
			err = switchboard.Errorf(switchboard.ECONFLICT, "%s has an active MCP token labelled %q; revoke it or choose another label", g.Handle, body.Label)
		}
		s.WriteError(w, r, err)
		return
	}
	v := s.viewMCPToken(r, tok, g, nil)
	v.Token = secret
	httpapi.WriteJSON(w, http.StatusCreated, v)
}

// handleIssueAccountMCPToken mints an account MCP token: POST /mcp-tokens
// {label, agents}. Every agent named must be the caller's (the operator:
// of one account); another's is not found.
func (s *Face) handleIssueAccountMCPToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	var body ownerapi.AccountMCPTokenIssue
	if err := s.DecodeJSON(w, r, &body); err != nil {
		s.WriteError(w, r, err)
		return
	}
	if body.Label == "" {
		body.Label = DefaultMCPTokenLabel
	}
	switch {
	case !switchboard.ValidLabel(body.Label):
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "label must be 1 to 64 letters, digits, '_' or '-'"))
		return
	case len(body.Agents) == 0 || len(body.Agents) > maxAccountTokenAgents:
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "agents must name 1 to %d of your agents", maxAccountTokenAgents))
		return
	}
	tok := &switchboard.Token{Kind: switchboard.TokenMCP, Label: body.Label}
	agents := make(map[string]*switchboard.Agent)
	for _, ref := range body.Agents {
		g, err := s.AgentByRef(r, acct, ref)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		if tok.AccountID != "" && g.AccountID != tok.AccountID {
			s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "the agents of one token must be of one account"))
			return
		}
		tok.AccountID = g.AccountID
		if agents[g.ID] == nil {
			tok.Agents = append(tok.Agents, g.ID)
		}
		agents[g.ID] = g
	}
	secret, hash := switchboard.NewToken(switchboard.TokenMCP)
	tok.Hash = hash
	err := s.Tokens.CreateToken(r.Context(), tok, false)
	s.Record(r, acct, switchboard.AuditTokenIssue, audit.Token(tok.AccountID, switchboard.TokenMCP, body.Label,
		"agents "+strings.Join(body.Agents, ", ")), err)
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
			err = switchboard.Errorf(switchboard.ECONFLICT, "the account has an active account MCP token labelled %q; revoke it or choose another label", body.Label)
		}
		s.WriteError(w, r, err)
		return
	}
	v := s.viewMCPToken(r, tok, nil, agents)
	v.Token = secret
	httpapi.WriteJSON(w, http.StatusCreated, v)
}

// maxAccountTokenAgents bounds the agents one account MCP token acts for.
const maxAccountTokenAgents = 100

// handleListAgentMCPTokens lists the agent's active MCP tokens: GET
// /agents/{ref}/mcp-tokens.
func (s *Face) handleListAgentMCPTokens(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	kind := switchboard.TokenMCP
	toks, err := s.Tokens.FindTokens(r.Context(), switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Active: true})
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	grants, err := s.mcpGrants(r, &g.AccountID)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.MCPToken, 0, len(toks))
	for _, t := range toks {
		out = append(out, withGrant(s.viewMCPToken(r, t, g, nil), grants[t.Hash]))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleListMCPTokens lists the active MCP tokens of the account's agents:
// GET /mcp-tokens.
func (s *Face) handleListMCPTokens(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	toks, agents, err := s.accountMCPTokens(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var of *string
	if !acct.IsOperator() {
		of = &acct.ID
	}
	grants, err := s.mcpGrants(r, of)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.MCPToken, 0, len(toks))
	for _, t := range toks {
		switch g := agents[t.AgentID]; {
		case g != nil:
			out = append(out, withGrant(s.viewMCPToken(r, t, g, nil), grants[t.Hash]))
		case t.AgentID == "":
			out = append(out, withGrant(s.viewMCPToken(r, t, nil, agents), grants[t.Hash]))
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleRevokeMCPToken revokes an MCP token of one of the account's
// agents by its id: DELETE /mcp-tokens/{id}. It stops working with the
// next request, on every instance; the OAuth grant it belongs to, if
// any, ends with it.
func (s *Face) handleRevokeMCPToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	toks, agents, err := s.accountMCPTokens(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	id := r.PathValue("id")
	for _, t := range toks {
		if switchboard.TokenID(t.Hash) != id || (t.AgentID != "" && agents[t.AgentID] == nil) {
			continue
		}
		kind := switchboard.TokenMCP
		f := switchboard.TokenFilter{Kind: &kind, AgentID: &t.AgentID, Label: &t.Label, AccountID: &t.AccountID}
		_, err := s.Tokens.RevokeTokens(r.Context(), f)
		target := audit.Token(t.AccountID, switchboard.TokenMCP, t.Label, "id "+id)
		s.Record(r, acct, switchboard.AuditTokenRevoke, target, err)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		grant, err := s.grants.EndGrantOf(r.Context(), t.Hash)
		if grant != nil || err != nil {
			s.Record(r, acct, switchboard.AuditMCPGrantRevoke, httpapi.GrantTarget(t.AccountID, grant, t.Label), err)
		}
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, ownerapi.MCPTokenRevoked{Revoked: true, ID: id})
		return
	}
	s.WriteError(w, r, switchboard.Errorf(switchboard.ENOTFOUND, "no active MCP token has this id"))
}

// accountMCPTokens returns the active MCP tokens of the account's agents
// (the operator: of every agent), with those agents by id.
func (s *Face) accountMCPTokens(r *http.Request, acct *switchboard.Account) ([]*switchboard.Token, map[string]*switchboard.Agent, error) {
	var f switchboard.AgentFilter
	kind := switchboard.TokenMCP
	tf := switchboard.TokenFilter{Kind: &kind, Active: true}
	if !acct.IsOperator() {
		f.AccountID, tf.AccountID = &acct.ID, &acct.ID
	}
	gs, err := s.Agents.FindAgents(r.Context(), f)
	if err != nil {
		return nil, nil, err
	}
	agents := make(map[string]*switchboard.Agent, len(gs))
	for _, g := range gs {
		agents[g.ID] = g
	}
	toks, err := s.Tokens.FindTokens(r.Context(), tf)
	return toks, agents, err
}

// mcpGrants returns the live OAuth grants of the account (nil: every
// account's) by the hash of their MCP token; none while OAuth is off.
func (s *Face) mcpGrants(r *http.Request, accountID *string) (map[string]*switchboard.OAuthGrant, error) {
	return s.grants.GrantsByAccess(r.Context(), accountID)
}

// withGrant adds to an MCP token's view the OAuth grant it belongs to,
// if g is not nil.
func withGrant(v ownerapi.MCPToken, g *switchboard.OAuthGrant) ownerapi.MCPToken {
	if g != nil {
		v.Grant = &ownerapi.MCPGrant{ClientID: g.ClientID, ClientName: g.ClientName, CreatedAt: g.CreatedAt}
	}
	return v
}

// viewMCPToken is an MCP token as the owner API shows it, without its
// secret: of the agent g, or (g nil) an account token, whose agents are
// looked up in agents.
func (s *Face) viewMCPToken(r *http.Request, t *switchboard.Token, g *switchboard.Agent, agents map[string]*switchboard.Agent) ownerapi.MCPToken {
	v := ownerapi.MCPToken{ID: switchboard.TokenID(t.Hash), Label: t.Label, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, ExpiresAt: t.ExpiresAt}
	if g != nil {
		v.Agent, v.MCPURL = g.Handle, s.MCPURL(r, g)
		return v
	}
	v.MCPURL = s.BaseURL(r) + "/mcp"
	v.Agents = []string{}
	for _, id := range append(append([]string{}, t.Agents...), t.CreatedAgent) {
		if a := agents[id]; a != nil {
			v.Agents = append(v.Agents, a.Handle)
		}
	}
	return v
}
