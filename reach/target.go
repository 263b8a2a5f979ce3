package reach

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/domainname"
	"github.com/switchboard-dev/switchboard/ownerapi"
	"github.com/switchboard-dev/switchboard/publicurl"
)

// Target is one public address to check.
type Target struct {
	// Kind is ownerapi.ReachDeployment or ownerapi.ReachAgent; Agent the
	// handle of an agent's address.
	Kind, Agent string
	// Name is the host name checked; Port the port its HTTPS is dialed
	// on (0: the checker's, 443 unless configured).
	Name string
	Port int
	// URL is the public address, as shown.
	URL string
	// Fetch is the page fetched through the name; Card says it is an
	// agent card, which must name Expect (the agent's address) when that
	// is set; else it is /healthz.
	Fetch  string
	Card   bool
	Expect string
}

// AgentTargets returns the public addresses of agent g that have a
// domain: the root of its own domain (when it has one), then its address
// on the deployment's name. Only an https public URL on a domain name has
// any: a deployment on plain http or on an IP address has no certificate
// to check.
func (c *Checker) AgentTargets(g *switchboard.Agent) []Target {
	host, port, ok := c.base()
	if !ok {
		return nil
	}
	address := publicurl.AddressAt(c.cfg.PublicURL, g)
	var out []Target
	if g.Domain != "" {
		out = append(out, Target{Kind: ownerapi.ReachAgent, Agent: g.Handle, Name: g.Domain, URL: address,
			Fetch: "https://" + g.Domain + "/.well-known/agent-card.json", Card: true, Expect: address})
	}
	// The card served on the deployment's name names that address.
	path := c.cfg.PublicURL + "/a/" + g.Handle
	out = append(out, Target{Kind: ownerapi.ReachAgent, Agent: g.Handle, Name: host, Port: port, URL: path,
		Fetch: path + "/.well-known/agent-card.json", Card: true, Expect: path})
	return out
}

// DeploymentTargets returns the deployment's own names (the public URL's
// host, then Config.Domains), each checked with GET /healthz; none
// unless the public URL is https on a domain name.
func (c *Checker) DeploymentTargets() []Target {
	host, port, ok := c.base()
	if !ok {
		return nil
	}
	out := []Target{{Kind: ownerapi.ReachDeployment, Name: host, Port: port, URL: c.cfg.PublicURL, Fetch: c.cfg.PublicURL + "/healthz"}}
	for _, d := range c.own {
		if d != host {
			out = append(out, Target{Kind: ownerapi.ReachDeployment, Name: d, URL: "https://" + d, Fetch: "https://" + d + "/healthz"})
		}
	}
	return out
}

// base returns the host and port of the public URL, and whether it is an
// https URL on a domain name.
func (c *Checker) base() (host string, port int, ok bool) {
	u, err := url.Parse(c.cfg.PublicURL)
	if err != nil || u.Scheme != "https" {
		return "", 0, false
	}
	host, err = domainname.Parse(u.Hostname())
	if err != nil {
		return "", 0, false
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	return host, port, true
}

// ownNames returns the deployment's own names: the public URL's host (if
// a domain name), then domains, each once.
func ownNames(publicURL string, domains []string) []string {
	var out []string
	add := func(n string) {
		n, err := domainname.Parse(strings.TrimSuffix(n, "."))
		if err != nil {
			return
		}
		for _, o := range out {
			if o == n {
				return
			}
		}
		out = append(out, n)
	}
	if u, err := url.Parse(publicURL); err == nil && publicURL != "" {
		add(u.Hostname())
	}
	for _, d := range domains {
		add(d)
	}
	return out
}
