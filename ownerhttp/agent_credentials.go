package ownerhttp

import (
	"net/http"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/httpapi"
	"github.com/switchboard-dev/switchboard/netguard"
	"github.com/switchboard-dev/switchboard/ownerapi"
)

// validateEndpoint checks a webhook agent's endpoint: an absolute http(s)
// URL without credentials. Whether its host may be reached is decided when
// a request is made, after DNS resolution.
func validateEndpoint(endpoint string) error {
	if len(endpoint) > 2048 || netguard.CheckURL(endpoint) != nil {
		return switchboard.Errorf(switchboard.EINVALID, "endpoint must be an absolute http(s) URL without credentials or an IPv6 zone")
	}
	return nil
}

func (s *Face) handleRotateAgentToken(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	secret, err := s.owners.RotateAgentToken(r.Context(), g)
	s.Record(r, acct, switchboard.AuditTokenRotate, audit.Token(g.AccountID, switchboard.TokenAgent, "", "agent "+g.Handle), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.AgentTokenRotation{Agent: g.Handle, AgentToken: secret})
}

func (s *Face) handleRotateWebhookSecret(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	if g.Mode != switchboard.ModeWebhook {
		s.WriteError(w, r, switchboard.Errorf(switchboard.EINVALID, "webhook secrets are for webhook agents; %s is in %s mode", g.Handle, g.Mode))
		return
	}
	secret := switchboard.NewWebhookSecret()
	_, err = s.Agents.UpdateAgent(r.Context(), g.ID, switchboard.AgentUpdate{WebhookSecret: &secret})
	s.Record(r, acct, switchboard.AuditTokenRotate, audit.Token(g.AccountID, "webhook_secret", "", "agent "+g.Handle), err)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.WebhookSecretRotation{Agent: g.Handle, WebhookSecret: secret})
}

// handleDeliveries lists an agent's deliveries that are still on their way
// (queued or offered), or all with ?all=1: what waits for the agent.
func (s *Face) handleDeliveries(w http.ResponseWriter, r *http.Request, acct *switchboard.Account) {
	g, err := s.OwnedAgent(r, acct)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	f := switchboard.DeliveryFilter{AgentID: &g.ID}
	if r.URL.Query().Get("all") == "" {
		f.States = []switchboard.DeliveryState{switchboard.DeliveryQueued, switchboard.DeliveryOffered}
	}
	ds, err := s.Deliveries.FindDeliveries(r.Context(), f)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	out := make([]ownerapi.Delivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, ownerapi.Delivery{ID: d.ID, TaskID: string(d.TaskID), Kind: string(d.Kind), State: string(d.State),
			Attempts: d.Attempts, Deadline: d.Deadline, LastError: d.LastError, CreatedAt: d.CreatedAt})
	}
	httpapi.WriteJSON(w, http.StatusOK, ownerapi.Deliveries{Agent: g.Handle, Deliveries: out})
}
