package ownerhttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/domainname"
)

// agentDomain reads the domain an owner asks for an agent (PATCH or POST
// /agents {"domain"}): "" removes it; anything else must be a name
// domainname.Normalize takes, not the deployment's own nor, but for the
// operator, under it. Each refusal is EUNPROCESSABLE and says which.
// Whether another agent holds it, and the account's quota, the store
// decides (domainQuota).
func (s *Face) agentDomain(r *http.Request, acct *switchboard.Account, raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	d, err := domainname.Normalize(raw)
	if err != nil {
		return "", err
	}
	if !s.URLs.Known() {
		return "", switchboard.Errorf(switchboard.EUNPROCESSABLE,
			"this deployment serves no agent domains: it must know its own address first (serve --public-url or --domain)")
	}
	own := append([]string{hostOf(s.BaseURL(r)), s.URLs.Host(r)}, s.Cfg.DeploymentDomains...)
	for _, o := range own {
		switch {
		case o == "":
		case d == o:
			return "", switchboard.Errorf(switchboard.EUNPROCESSABLE, "%s is this deployment's own domain, not an agent's", d)
		case domainname.Under(d, o) && !acct.IsOperator():
			return "", switchboard.Errorf(switchboard.EUNPROCESSABLE,
				"%s is under this deployment's own domain %s: only the operator gives agents names under it", d, o)
		}
	}
	return d, nil
}

// hostOf returns the host name of a URL as domainname.Host reads it.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return domainname.Host(u.Host)
}

// domainQuota is the quota of agent domains an account's updates carry
// (switchboard.AgentUpdate.DomainQuota): none for the operator, who
// spends the deployment's certificate authority limits knowingly; the
// quota counts the agents of the agent's own account.
func (s *Face) domainQuota(acct *switchboard.Account) *int {
	if acct.IsOperator() {
		return nil
	}
	n := max(s.Cfg.MaxDomainsPerAccount, 0)
	return &n
}

// giveDomain gives g, just created, the domain d within the account's
// quota (the store counts it with the account locked). An agent that
// cannot have it is deleted again, before anyone else knew of it, and the
// refusal returned: a create with a domain makes the agent with its
// domain, or nothing.
func (s *Face) giveDomain(r *http.Request, acct *switchboard.Account, g *switchboard.Agent, d string) (*switchboard.Agent, error) {
	secret := g.WebhookSecret
	got, err := s.Tasks.UpdateAgent(r.Context(), g.ID, switchboard.AgentUpdate{Domain: &d, DomainQuota: s.domainQuota(acct)})
	if err != nil {
		if derr := s.Agents.DeleteAgent(r.Context(), g.ID); derr != nil {
			s.Logger.Error("delete an agent whose domain was refused", "agent_id", g.ID, "err", derr)
		}
		return nil, err
	}
	got.WebhookSecret = secret
	return got, nil
}
