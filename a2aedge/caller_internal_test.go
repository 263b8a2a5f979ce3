package a2aedge

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/internal/sqlitetest"
)

// TestAgentTokenWithoutNetwork: on an edge built without the network, an
// approved agent's agent token opens no other agent's address (it is a
// bad token there), while the address's own peer tokens do.
func TestAgentTokenWithoutNetwork(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := New(httpapi.NewEnv(httpapi.EnvDeps{Agents: db, Tokens: db, Logger: slog.New(slog.DiscardHandler)}, httpapi.Config{}), Deps{})
	target := seedBenchAgent(t, db)
	sender := &switchboard.Agent{ID: switchboard.NewID(), AccountID: target.AccountID, Handle: "sender", Name: "Sender",
		Mode: switchboard.ModeInbox, AcceptsTasks: true, Approved: true}
	if err := db.CreateAgent(ctx, sender); err != nil {
		t.Fatal(err)
	}
	call := func(kind switchboard.TokenKind, tok *switchboard.Token) (rpcCaller, error) {
		secret, hash := switchboard.NewToken(kind)
		tok.Hash, tok.Kind = hash, kind
		if err := db.CreateToken(ctx, tok, kind != switchboard.TokenPeer); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/a/"+target.Handle, nil)
		r.Header.Set("Authorization", "Bearer "+secret)
		return s.authenticateCaller(r, rpcTarget{agent: target})
	}
	if _, err := call(switchboard.TokenAgent, &switchboard.Token{AgentID: sender.ID}); err != httpapi.ErrBadToken {
		t.Errorf("an agent token at another agent's address without the network: %v, want ErrBadToken", err)
	}
	if c, err := call(switchboard.TokenPeer, &switchboard.Token{AgentID: target.ID, Label: "bob"}); err != nil || c.peer.Label != "bob" {
		t.Errorf("a peer token of the address: %+v, %v", c.peer, err)
	}
}
