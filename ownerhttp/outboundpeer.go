package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// outboundPeerView is a synced alias as the owner API shows it: never its
// token.
func outboundPeerView(p *switchboard.OutboundPeer) ownerapi.OutboundPeer {
	return ownerapi.OutboundPeer{Alias: p.Alias, URL: p.URL, HasToken: !p.Unreadable && p.Token != "", SyncedAt: p.SyncedAt}
}

// outboundPeerAgent is the owned agent of the path, on a server that keeps
// synced aliases.
func (s *Face) outboundPeerAgent(r *http.Request, acct *switchboard.Account) (*switchboard.Agent, error) {
	return s.OwnedAgent(r, acct)
}

// handlePutOutboundPeer serves PUT /agents/{ref}/peers/{alias} {url,
// token}: 201 when the alias is new, 200 when it replaced one.
func (s *Face) handlePutOutboundPeer(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.outboundPeerAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	var b ownerapi.OutboundPeerPut
	if err := s.DecodeJSON(w, r, &b); err != nil {
		s.WriteError(w, r, err)
		return
	}
	p, created, err := s.OutboundPeers.Put(r.Context(), g.ID, r.PathValue("alias"), b.URL, b.Token)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, outboundPeerView(p))
}

// handleListOutboundPeers serves GET /agents/{ref}/peers.
func (s *Face) handleListOutboundPeers(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.outboundPeerAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	all, err := s.OutboundPeers.List(r.Context(), g.ID)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := ownerapi.OutboundPeers{Agent: g.Handle, Peers: make([]ownerapi.OutboundPeer, 0, len(all))}
	for _, p := range all {
		out.Peers = append(out.Peers, outboundPeerView(p))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleDeleteOutboundPeer serves DELETE /agents/{ref}/peers/{alias}.
func (s *Face) handleDeleteOutboundPeer(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.outboundPeerAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	alias := r.PathValue("alias")
	if err := s.OutboundPeers.Delete(r.Context(), g.ID, alias); err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.OutboundPeerDeleted{Deleted: true, Alias: alias})
}
