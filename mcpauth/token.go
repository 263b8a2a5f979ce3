package mcpauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/pairing"
)

// Endpoint is the MCP endpoint a token endpoint serves: an agent's
// (AgentID set) or the account endpoint (AgentID empty), at Resource.
type Endpoint struct {
	AgentID  string
	Resource string
}

// TokenPair is what a token request returns: an MCP token and the
// refresh token of its grant.
type TokenPair struct {
	AccessToken  string
	RefreshToken string
	// Label is the MCP token's label.
	Label string
	// ExpiresIn is how long the access token opens the endpoint.
	ExpiresIn time.Duration
}

func invalidGrant(format string, args ...any) *pairing.Error {
	return &pairing.Error{Code: pairing.ErrInvalidGrant, Description: fmt.Sprintf(format, args...)}
}

// Exchange redeems an authorization code (grant_type authorization_code)
// at the endpoint's token endpoint. The code is marked used when read, so
// a wrong code_verifier, client_id or redirect_uri burns it; a code
// presented again ends the grant its first use got, if any (RFC 6749
// section 4.1.2).
func (s *Service) Exchange(ctx context.Context, form url.Values, ep Endpoint) (*TokenPair, error) {
	code, verifier := form.Get("code"), form.Get("code_verifier")
	if code == "" || form.Get("client_id") == "" || len(verifier) < 43 || len(verifier) > 128 {
		return nil, &pairing.Error{Code: pairing.ErrInvalidRequest, Description: "code, client_id and code_verifier (43 to 128 characters) are required"}
	}
	c, err := s.Store.TakeOAuthCode(ctx, switchboard.HashToken(code))
	switch switchboard.ErrorCode(err) {
	case "":
	case switchboard.ENOTFOUND:
		return nil, invalidGrant("unknown or expired authorization code")
	case switchboard.ECONFLICT:
		// A code used twice: it leaked, and its first use may have been
		// the thief's. The tokens issued from it are revoked; the
		// client asks the owner's consent again.
		s.Logger.Warn("an mcp oauth authorization code was used again: its grant ends", "client_id", c.ClientID)
		if err := s.endGrantOfCode(ctx, c.Hash); err != nil {
			return nil, err
		}
		return nil, invalidGrant("the authorization code was used already; any tokens issued for it are revoked")
	default:
		return nil, err
	}
	sum := sha256.Sum256([]byte(verifier))
	switch {
	case !s.now().Before(c.ExpiresAt):
		return nil, invalidGrant("the authorization code has expired")
	case c.ClientID != form.Get("client_id"):
		return nil, invalidGrant("the code was issued to another client")
	case form.Get("redirect_uri") != "" && form.Get("redirect_uri") != c.RedirectURI:
		return nil, invalidGrant("redirect_uri differs from the authorization request's")
	case c.Resource != ep.Resource || c.Target.AgentID != ep.AgentID:
		return nil, invalidGrant("the code was issued for another MCP endpoint")
	case form.Get("resource") != "" && strings.TrimRight(form.Get("resource"), "/") != c.Resource:
		return nil, &pairing.Error{Code: "invalid_target", Description: "resource must be " + c.Resource}
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.Challenge)) != 1:
		return nil, invalidGrant("code_verifier does not match the code challenge")
	}
	return s.issue(ctx, c)
}

// issue creates the MCP token and the grant of a redeemed code, under the
// first free label of the code's base (base, base-2, …).
func (s *Service) issue(ctx context.Context, c *switchboard.OAuthCode) (*TokenPair, error) {
	taken, err := s.oauthLabels(ctx, c.Target)
	if err != nil {
		return nil, err
	}
	label := c.Label
	for i := 2; taken[label]; i++ {
		label = fmt.Sprintf("%s-%d", c.Label, i)
	}
	access, accessHash := switchboard.NewToken(switchboard.TokenMCP)
	expires := s.now().Add(AccessTTL)
	tok := &switchboard.Token{Hash: accessHash, Kind: switchboard.TokenMCP, AccountID: c.Target.AccountID,
		AgentID: c.Target.AgentID, Label: label, Agents: c.Target.Agents, ExpiresAt: &expires}
	if err := s.Tokens.CreateToken(ctx, tok, false); err != nil {
		return nil, err
	}
	refresh := newRefreshToken()
	g := &switchboard.OAuthGrant{RefreshHash: switchboard.HashToken(refresh), AccessHash: accessHash, ClientID: c.ClientID, ClientName: c.ClientName,
		Target: c.Target, Label: label, CreatedAt: s.now(), CodeHash: c.Hash}
	if err := s.Store.CreateOAuthGrant(ctx, g); err != nil {
		// The code was presented again meanwhile (or the grant failed):
		// the MCP token issued for it goes too.
		if rerr := s.revokeGrantToken(ctx, g); rerr != nil {
			return nil, rerr
		}
		if switchboard.ErrorCode(err) == switchboard.ECONFLICT {
			return nil, invalidGrant("the authorization code was used again; the tokens issued for it are revoked")
		}
		return nil, err
	}
	s.Logger.Info("mcp oauth token issued", "client_id", c.ClientID, "label", label, "agent_id", c.Target.AgentID)
	return &TokenPair{AccessToken: access, RefreshToken: refresh, Label: label, ExpiresIn: AccessTTL}, nil
}

// ReuseGrace is how long after a grant's rotation its old refresh token,
// presented again, is only refused: a client that refreshed twice at once
// (two calls that found the access token expired) keeps its grant. Later,
// the grant ends.
const ReuseGrace = 30 * time.Second

// Refresh rotates a grant (grant_type refresh_token): a new MCP token and
// refresh token replace the old ones, which stop working. A grant whose
// MCP token was revoked, or refreshed with another client_id, or whose
// refresh token before the last is presented again (past ReuseGrace),
// ends.
func (s *Service) Refresh(ctx context.Context, form url.Values, ep Endpoint) (*TokenPair, error) {
	old := form.Get("refresh_token")
	if old == "" {
		return nil, &pairing.Error{Code: pairing.ErrInvalidRequest, Description: "refresh_token is required"}
	}
	access, accessHash := switchboard.NewToken(switchboard.TokenMCP)
	refresh := newRefreshToken()
	g, err := s.Store.RotateOAuthGrant(ctx, switchboard.HashToken(old), switchboard.HashToken(refresh), accessHash)
	switch switchboard.ErrorCode(err) {
	case "":
	case switchboard.ENOTFOUND:
		return nil, invalidGrant("unknown, used or revoked refresh token")
	case switchboard.ECONFLICT:
		if s.now().Sub(g.RotatedAt) < ReuseGrace {
			return nil, invalidGrant("the refresh token was used already, just now")
		}
		// A refresh token used again after its rotation: two holders of
		// it (OAuth 2.1, section 4.3.1), one of them a thief. The grant
		// ends, with its MCP token; the owner's client consents again.
		s.Logger.Warn("a rotated mcp oauth refresh token was used again: the grant ends", "client_id", g.ClientID, "label", g.Label)
		if err := s.end(ctx, g.RefreshHash); err != nil {
			return nil, err
		}
		return nil, invalidGrant("the refresh token was used already; the grant has ended")
	default:
		return nil, err
	}
	if (form.Get("client_id") != "" && form.Get("client_id") != g.ClientID) || g.Target.AgentID != ep.AgentID {
		s.end(ctx, switchboard.HashToken(refresh))
		return nil, invalidGrant("the refresh token was issued to another client or endpoint; the grant has ended")
	}
	prev, err := s.grantToken(ctx, g)
	if err != nil {
		return nil, err
	}
	if prev == nil {
		s.end(ctx, switchboard.HashToken(refresh))
		return nil, invalidGrant("the MCP token of this grant was revoked")
	}
	expires := s.now().Add(AccessTTL)
	tok := &switchboard.Token{Hash: accessHash, Kind: switchboard.TokenMCP, AccountID: prev.AccountID,
		AgentID: prev.AgentID, Label: prev.Label, Agents: prev.Agents, ExpiresAt: &expires}
	if err := s.Tokens.CreateToken(ctx, tok, true); err != nil { // revokes prev
		return nil, err
	}
	if prev.CreatedAgent != "" {
		if err := s.Tokens.RecordCreatedAgent(ctx, accessHash, prev.CreatedAgent); err != nil {
			return nil, err
		}
	}
	return &TokenPair{AccessToken: access, RefreshToken: refresh, Label: prev.Label, ExpiresIn: AccessTTL}, nil
}

// grantToken returns the MCP token of the grant g, expired or not, or nil
// if it was revoked: a refresh renews an expired token, not a revoked one.
func (s *Service) grantToken(ctx context.Context, g *switchboard.OAuthGrant) (*switchboard.Token, error) {
	kind, label := switchboard.TokenMCP, g.Label
	f := switchboard.TokenFilter{Kind: &kind, Label: &label, Active: true}
	if g.Target.AgentID != "" {
		f.AgentID = &g.Target.AgentID
	} else {
		f.AccountID = &g.Target.AccountID
	}
	toks, err := s.Tokens.FindTokens(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		if t.Hash == g.AccessHash {
			return t, nil
		}
	}
	return nil, nil
}

// Revoke ends the grant of a refresh token or of its MCP token (RFC 7009):
// both tokens stop working. Any other token is left alone; either way the
// caller answers 200.
func (s *Service) Revoke(ctx context.Context, token string) error {
	_, err := s.RevokeGrant(ctx, token)
	return err
}

// RevokeGrant is Revoke that returns the grant it ended, nil if the token
// was none's (for the audit log).
func (s *Service) RevokeGrant(ctx context.Context, token string) (*switchboard.OAuthGrant, error) {
	if token == "" {
		return nil, nil
	}
	return s.endReturning(ctx, switchboard.HashToken(token))
}

// EndGrantOf ends the grant whose MCP token has the hash accessHash, if
// any: the grant is deleted and its MCP token revoked. It returns the
// grant it ended, nil if there was none.
func (s *Service) EndGrantOf(ctx context.Context, accessHash string) (*switchboard.OAuthGrant, error) {
	return s.endReturning(ctx, accessHash)
}

// GrantsByAccess returns the live grants of the account (nil: of every
// account) by the hash of their MCP token.
func (s *Service) GrantsByAccess(ctx context.Context, accountID *string) (map[string]*switchboard.OAuthGrant, error) {
	gs, err := s.Store.FindOAuthGrants(ctx, switchboard.OAuthGrantFilter{AccountID: accountID})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*switchboard.OAuthGrant, len(gs))
	for _, g := range gs {
		out[g.AccessHash] = g
	}
	return out, nil
}

// end deletes the grant whose refresh or access hash is hash and revokes
// its MCP token.
func (s *Service) end(ctx context.Context, hash string) error {
	_, err := s.endReturning(ctx, hash)
	return err
}

// endReturning is end that returns the grant ended, nil if none was.
func (s *Service) endReturning(ctx context.Context, hash string) (*switchboard.OAuthGrant, error) {
	g, err := s.Store.DeleteOAuthGrant(ctx, hash)
	if err := s.endGrant(ctx, g, err); err != nil {
		return nil, err
	}
	return g, nil
}

// endGrantOfCode deletes the grant issued from the code with the hash and
// revokes its MCP token.
func (s *Service) endGrantOfCode(ctx context.Context, codeHash string) error {
	g, err := s.Store.DeleteOAuthGrantOfCode(ctx, codeHash)
	return s.endGrant(ctx, g, err)
}

// endGrant revokes the MCP token of g, a grant just deleted (none when
// err is ENOTFOUND).
func (s *Service) endGrant(ctx context.Context, g *switchboard.OAuthGrant, err error) error {
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.revokeGrantToken(ctx, g); err != nil {
		return err
	}
	s.Logger.Info("mcp oauth grant ended", "client_id", g.ClientID, "label", g.Label)
	return nil
}

// revokeGrantToken revokes the MCP token of the grant g: the token of its
// target with its label.
func (s *Service) revokeGrantToken(ctx context.Context, g *switchboard.OAuthGrant) error {
	kind := switchboard.TokenMCP
	_, err := s.Tokens.RevokeTokens(ctx, switchboard.TokenFilter{Kind: &kind, AccountID: &g.Target.AccountID,
		AgentID: &g.Target.AgentID, Label: &g.Label})
	return err
}

// oauthLabels returns the labels of the target's active MCP tokens that
// OAuth issued (LabelPrefix).
func (s *Service) oauthLabels(ctx context.Context, tg switchboard.OAuthTarget) (map[string]bool, error) {
	kind := switchboard.TokenMCP
	toks, err := s.Tokens.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AccountID: &tg.AccountID, AgentID: &tg.AgentID, Active: true})
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool)
	for _, t := range toks {
		if strings.HasPrefix(t.Label, LabelPrefix) {
			out[t.Label] = true
		}
	}
	return out, nil
}

// labelBase is the label of a client's MCP token before de-duplication:
// mcp- and the slug of its name.
func labelBase(clientName string) string {
	return LabelPrefix + strings.ToLower(pairing.LabelBase(clientName, "client"))
}

// newRefreshToken returns a new refresh token (256 random bits).
func newRefreshToken() string {
	secret, _ := switchboard.NewToken(switchboard.TokenMCP)
	return "sbr_" + strings.TrimPrefix(secret, "sbm_")
}
