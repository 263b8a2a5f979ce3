package dashboard

import (
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// agentBody is an agent's page.
type agentBody struct {
	Handle, Name, Description, Mode string
	// Address is the agent's A2A address (the root of its domain, when it
	// has one); Card its agent card.
	Address, Card string
	// Published is the card a forwarding connector published for the
	// agent (nil: none).
	Published *publishedCardRow
	// Server is the base URL, for the connect command.
	Server                string
	Connector, Live       bool
	Accepting             bool
	Tokens                []tokenRow
	Network               bool // communities are on
	Communities           []string
	NewToken, NewTokenFor string // a peer token just issued, shown once
	NewAgentToken         string // an agent token just rotated, shown once
	// AliasesOn says whether the server keeps synced aliases; Aliases
	// are the agent's.
	AliasesOn bool
	Aliases   []aliasRow
	// Wakes, Outbox say whether the wake and outbox pages are served.
	Wakes, Outbox bool
	CSRF          string
	Back          string // this page's path, for forms that come back
}

// agentNote is what a form's POST brings back to an agent's page: a
// problem to show, or a token just made, shown this once (never stored in
// the clear, never in a URL).
type agentNote struct {
	Problem               string
	NewToken, NewTokenFor string // a peer token and its label
	NewAgentToken         string
}

// tokenRow is one active peer token, without its secret (not stored).
type tokenRow struct {
	Label   string
	Created string
}

// handleAgent is an agent's page: its address, card (and the one its
// forwarding connector published) and connect command, its peer tokens,
// its synced aliases and its communities.
func (c *Console) handleAgent(w http.ResponseWriter, r *http.Request, v *viewer) {
	c.renderAgent(w, r, v, http.StatusOK, agentNote{})
}

// renderAgent writes the agent's page, with what a form's POST brings
// back.
func (c *Console) renderAgent(w http.ResponseWriter, r *http.Request, v *viewer, status int, note agentNote) {
	ctx := r.Context()
	g, err := c.findManaged(ctx, v, r.PathValue("handle"))
	if switchboard.ErrorCode(err) == switchboard.ENOTFOUND {
		c.renderError(w, r, http.StatusNotFound, "There is no such agent.")
		return
	} else if err != nil {
		c.internalError(w, r, "find an agent", err)
		return
	}
	kind := switchboard.TokenPeer
	toks, err := c.Tokens.FindTokens(ctx, switchboard.TokenFilter{Kind: &kind, AgentID: &g.ID, Active: true})
	if err != nil {
		c.internalError(w, r, "list peer tokens", err)
		return
	}
	base := c.BaseURL(r)
	body := &agentBody{Handle: g.Handle, Name: g.Name, Description: g.Description, Mode: string(g.Mode),
		Address: publicurl.AddressAt(base, g), Server: base, Connector: g.Mode == switchboard.ModeConnector,
		Accepting: g.AcceptsTasks, NewToken: note.NewToken, NewTokenFor: note.NewTokenFor, NewAgentToken: note.NewAgentToken,
		Wakes: c.Wakes != nil, Outbox: c.Outbox != nil, CSRF: v.signIn.CSRF, Back: "/dashboard/agents/" + g.Handle}
	body.Card = body.Address + "/.well-known/agent-card.json"
	body.Published = c.publishedCard(ctx, g, body.Address)
	if session, err := c.Tasks.AgentSession(ctx, g.ID); err == nil {
		body.Live = session.Live(c.cfg.Now())
	}
	for _, t := range toks {
		body.Tokens = append(body.Tokens, tokenRow{Label: t.Label, Created: t.CreatedAt.UTC().Format(time.DateTime + " UTC")})
	}
	if c.OutboundPeers != nil {
		body.AliasesOn = true
		if body.Aliases, err = c.syncedAliases(ctx, g.ID); err != nil {
			c.internalError(w, r, "list synced aliases", err)
			return
		}
	}
	if c.Network != nil {
		body.Network = true
		comms, err := c.Network.AgentCommunities(ctx, g.ID)
		if err != nil {
			c.internalError(w, r, "read the agent's communities", err)
			return
		}
		body.Communities = comms[g.ID]
	}
	c.render(w, status, "agent", page{Title: "Agent " + g.Handle, CSRF: v.signIn.CSRF, Account: v.account.Name, Operator: v.account.IsOperator(),
		Problem: note.Problem, Body: body})
}

// internalError logs err and answers 500 with a page that says only that.
func (c *Console) internalError(w http.ResponseWriter, r *http.Request, doing string, err error) {
	c.Logger.Error(doing, "err", err)
	c.renderError(w, r, http.StatusInternalServerError, "Something went wrong; try again.")
}
