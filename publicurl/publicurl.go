// Package publicurl says where the world reaches a deployment and its
// agents: the configured public URL, or one taken from each request
// (honouring X-Forwarded-Proto and X-Forwarded-Host only when told to).
// Every face that names an address (cards, landing pages, the connector's
// hello, the console's origin, wakes) asks one Resolver, so that they all
// name the same; and every face that reads one (an agent naming another
// by URL) reads it with HandleAt, so that they all read the same.
//
// An agent with a domain (Agent.Domain, docs/agents.md "Agent domains")
// has its address at the root of that host, https://{domain}: Address and
// AddressAt name it so, and HandleAt reads it as the agent's.
package publicurl

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/domainname"
)

// Resolver computes public URLs. Its zero value takes them from each
// request's Host.
type Resolver struct {
	// PublicURL is the deployment's base URL (no trailing slash); empty:
	// taken from each request.
	PublicURL string
	// TrustForwarded derives the base from X-Forwarded-Proto and
	// X-Forwarded-Host, for a server behind a proxy that sets them.
	TrustForwarded bool
	// Domains are the deployment's own host names (serve --domain), as
	// domainname.Normalize holds them. A request to one of them is the
	// deployment's, never an agent domain's; without a PublicURL, the
	// first is the deployment's host on a request that reached an agent
	// domain.
	Domains []string
	// Agents finds the agent of an agent domain, for Handle; nil: no URL
	// of an agent domain names an agent.
	Agents DomainFinder
}

// DomainFinder finds the agent whose domain a host name is, or returns
// ENOTFOUND (switchboard.AgentStore's FindAgentByDomain).
type DomainFinder interface {
	FindAgentByDomain(ctx context.Context, domain string) (*switchboard.Agent, error)
}

// agentDomainKey marks a request's context as one that reached an agent
// domain.
type agentDomainKey struct{}

// WithAgentDomain returns ctx marked as the context of a request that
// reached the agent domain domain, and is served as that agent at the
// root of its host. Base then names the deployment's own host, never the
// agent's.
func WithAgentDomain(ctx context.Context, domain string) context.Context {
	return context.WithValue(ctx, agentDomainKey{}, domain)
}

// AgentDomain returns the agent domain r reached (WithAgentDomain), or "".
func AgentDomain(r *http.Request) string {
	d, _ := r.Context().Value(agentDomainKey{}).(string)
	return d
}

// Known reports whether the deployment's own address is configured (a
// public URL or own domains) rather than taken from each request: only
// then can a request to an agent domain be told from one to the
// deployment, and be sent to the deployment's host to sign in.
func (u Resolver) Known() bool { return u.PublicURL != "" || len(u.Domains) > 0 }

// Own reports whether host (as domainname.Host reads a Host header) is
// one of the deployment's own names: the public URL's host, or one of
// Domains.
func (u Resolver) Own(host string) bool {
	if host == "" {
		return false
	}
	if p, err := url.Parse(u.PublicURL); err == nil && u.PublicURL != "" && domainname.Host(p.Host) == host {
		return true
	}
	return slices.Contains(u.Domains, host)
}

// Base returns the deployment's base URL for r: the public URL, or one
// derived from the request. A Host header with characters no host name
// has is replaced by "localhost", so that a forged header cannot inject
// markup into cards and pages.
//
// On a request that reached an agent domain (WithAgentDomain), the base
// is the deployment's own: the public URL, or the first of Domains on the
// request's scheme.
func (u Resolver) Base(r *http.Request) string {
	if u.PublicURL != "" {
		return u.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if u.TrustForwarded {
		if p := strings.ToLower(lastValue(r.Header.Values("X-Forwarded-Proto"))); p == "http" || p == "https" {
			scheme = p
		}
		if h := lastValue(r.Header.Values("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	if AgentDomain(r) != "" && len(u.Domains) > 0 {
		host = u.Domains[0]
	}
	if !validHost(host) {
		host = "localhost"
	}
	return scheme + "://" + host
}

// Host returns the host name r was sent to, as domainname.Host reads it
// (lower case, no port; "" for an IP address): the last X-Forwarded-Host
// when TrustForwarded and a proxy set one, else the Host header. A
// request to an agent domain is found by it.
func (u Resolver) Host(r *http.Request) string {
	if u.TrustForwarded {
		if h := lastValue(r.Header.Values("X-Forwarded-Host")); h != "" {
			return domainname.Host(h)
		}
	}
	return domainname.Host(r.Host)
}

// Address returns an agent's address, with the base taken from the
// configuration or from r: AddressAt.
func (u Resolver) Address(r *http.Request, agent *switchboard.Agent) string {
	return AddressAt(u.Base(r), agent)
}

// DomainBase returns the base URL of the agent domain domain, for r:
// https://{domain}, or http://{domain} while the deployment, as r
// reaches it, is plain http (a deployment without TLS, tests on
// loopback).
func (u Resolver) DomainBase(r *http.Request, domain string) string {
	return DomainAt(u.Base(r), domain)
}

// AddressAt returns an agent's address on the deployment whose base URL
// is base: the root of its domain (DomainAt) when it has one, else
// {base}/a/{handle}.
func AddressAt(base string, agent *switchboard.Agent) string {
	if agent.Domain != "" {
		return DomainAt(base, agent.Domain)
	}
	return base + "/a/" + agent.Handle
}

// DomainAt returns the base URL of the agent domain domain on the
// deployment whose base URL is base: on base's scheme, https unless base
// is plain http; no port, no path.
func DomainAt(base, domain string) string {
	if strings.HasPrefix(strings.ToLower(base), "http://") {
		return "http://" + domain
	}
	return "https://" + domain
}

// Vary adds the headers a request-derived URL depends on to w's Vary, so
// that a shared cache never serves one host's card for another.
func (u Resolver) Vary(w http.ResponseWriter) {
	if u.PublicURL == "" {
		w.Header().Add("Vary", "Host")
		if u.TrustForwarded {
			w.Header().Add("Vary", "X-Forwarded-Host, X-Forwarded-Proto")
		}
	}
}

// lastValue returns the last entry of a comma-separated header that may
// appear several times: the one the nearest proxy added. Entries before it
// came from further away, possibly from the client itself.
func lastValue(values []string) string {
	if len(values) == 0 {
		return ""
	}
	last := values[len(values)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.TrimSpace(last)
}

// validHost reports whether h has only the characters of a host name, an
// IP literal and a port.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
			c == '.' || c == '-' || c == ':' || c == '[' || c == ']' || c == '_'
		if !ok {
			return false
		}
	}
	return true
}
