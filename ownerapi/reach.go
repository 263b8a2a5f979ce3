package ownerapi

import "time"

// The states of a public address and of each of its checks, in
// Reachability.State and in the State of its checks.
const (
	ReachOK         = "ok"          // checked, and as it should be
	ReachWarning    = "warning"     // works now, but will not for long (a certificate near its end)
	ReachFailing    = "failing"     // peers cannot reach it: Problem says why and what to do
	ReachNotChecked = "not_checked" // an earlier check failed, so this one could not run
)

// The kinds of a public address, in Reachability.Kind.
const (
	ReachDeployment = "deployment" // one of the deployment's own names (serve --domain, --public-url)
	ReachAgent      = "agent"      // an agent's address
)

// AgentReachability is GET /agents/{ref}/reachability: how the world
// reaches each public address of the agent: at its domain, and on the
// deployment's name. Addresses is empty when neither is an https URL on
// a domain name (a deployment on plain http or on an IP address).
type AgentReachability struct {
	Agent     string         `json:"agent"`
	Addresses []Reachability `json:"addresses"`
}

// Reachability is how the world reaches one public address, checked from
// the server, as a peer on the internet would: the name's DNS, the
// certificate served for it, and a page fetched through it. Results are
// reused for about a minute.
type Reachability struct {
	Kind string `json:"kind"` // ReachDeployment or ReachAgent
	// Agent is the handle of the agent the address is of; "" for a name
	// of the deployment.
	Agent string `json:"agent,omitempty"`
	Name  string `json:"name"` // the host name checked
	URL   string `json:"url"`  // the public address
	// State is the worst of the checks': ReachOK, ReachWarning or
	// ReachFailing. Problem is the first failing (or else warning) check's
	// sentence: what is wrong, and the fix.
	State     string    `json:"state"`
	Problem   string    `json:"problem,omitempty"`
	CheckedAt time.Time `json:"checked_at"`

	DNS         ReachDNS         `json:"dns"`
	Certificate ReachCertificate `json:"certificate"`
	// Card is the agent card fetched through the address (an agent's);
	// Health is GET /healthz fetched through it (a name of the
	// deployment). Exactly one is set.
	Card   *ReachFetch `json:"card,omitempty"`
	Health *ReachFetch `json:"health,omitempty"`
}

// ReachDNS is what the name resolves to.
type ReachDNS struct {
	State string `json:"state"` // ReachOK or ReachFailing
	// Addresses are the name's A and AAAA records.
	Addresses []string `json:"addresses"`
	// Server are the addresses of this server (those its own names
	// resolve to), against which an agent's domain is checked; empty when
	// they are not known or not compared.
	Server  []string `json:"server,omitempty"`
	Problem string   `json:"problem,omitempty"`
}

// ReachCertificate is the certificate served for the name over TLS.
type ReachCertificate struct {
	// State is ReachOK, ReachWarning (near its end), ReachFailing
	// (expired, for another name, not trusted, or no TLS at all) or
	// ReachNotChecked (the name does not resolve to an address to ask).
	State string `json:"state"`
	// Names are the names it is for; Issuer who issued it; NotAfter when
	// it ends and DaysLeft the whole days until then (negative once it
	// has). Absent when no certificate was served.
	Names    []string   `json:"names,omitempty"`
	Issuer   string     `json:"issuer,omitempty"`
	NotAfter *time.Time `json:"not_after,omitempty"`
	DaysLeft *int       `json:"days_left,omitempty"`
	Problem  string     `json:"problem,omitempty"`
}

// ReachFetch is a page fetched through the public address, over the TLS
// connection the certificate was read from.
type ReachFetch struct {
	State  string `json:"state"` // ReachOK, ReachFailing or ReachNotChecked
	URL    string `json:"url"`
	Status int    `json:"status,omitempty"` // the HTTP status, when one came
	// Problem is "" when ok, else what is wrong and what to do.
	Problem string `json:"problem,omitempty"`
}
