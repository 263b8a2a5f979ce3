package ownerapi

import "time"

// FrontCredentials is the body of PUT /agents/{ref}/upstream-credentials:
// the owner's credentials for a front's upstream. They replace the ones
// kept; an empty body removes them. They are never returned.
type FrontCredentials struct {
	Bearer  string            `json:"bearer,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// FrontCredentialsSet is the answer of PUT /agents/{ref}/upstream-credentials:
// what is kept, without the values.
type FrontCredentialsSet struct {
	Bearer  bool     `json:"bearer"`
	Headers []string `json:"headers"`
}

// FrontStatus is the answer of GET /agents/{ref}/front: the front's
// upstream and what is known of it.
type FrontStatus struct {
	Mode     string `json:"mode"`
	Upstream string `json:"upstream"`
	// Record is what the front keeps of its tasks: "task" or "none"
	// (pass-through); GivesUp lists what a pass-through front does not
	// offer (empty for "task").
	Record          string   `json:"record"`
	GivesUp         []string `json:"gives_up"`
	UpstreamCardURL string   `json:"upstream_card_url,omitempty"`
	// UpstreamValid is false, with UpstreamProblem, when the upstream's
	// URL is refused (plain http, private, credentials in it).
	UpstreamValid   bool   `json:"upstream_valid"`
	UpstreamProblem string `json:"upstream_problem,omitempty"`
	// Card is "ok", "stale", "missing" or "refused"; CardProblem says why.
	Card          string     `json:"card"`
	CardProblem   string     `json:"card_problem,omitempty"`
	CardFetchedAt *time.Time `json:"card_fetched_at,omitempty"`
	// UpstreamVersions are the protocol versions the upstream's card
	// offers (in JSON-RPC, HTTP+JSON or gRPC); UpstreamBinding the binding
	// the front speaks to it (JSON-RPC, HTTP+JSON or gRPC; empty when the
	// card is not read); UpstreamStreaming whether it streams.
	UpstreamVersions  []string     `json:"upstream_versions"`
	UpstreamBinding   string       `json:"upstream_binding,omitempty"`
	UpstreamStreaming bool         `json:"upstream_streaming"`
	UpstreamAuth      UpstreamAuth `json:"upstream_auth"`
	// HasBearer and CredentialHeaders say which credentials are kept
	// (names only, never values).
	HasBearer         bool          `json:"has_bearer"`
	CredentialHeaders []string      `json:"credential_headers"`
	LastFailure       *FrontFailure `json:"last_failure,omitempty"`
	// PublicCardLeaks lists what the public card would leak of the
	// upstream (empty: nothing).
	PublicCardLeaks []string `json:"public_card_leaks"`
}

// UpstreamAuth is what the upstream's card asks of its callers.
type UpstreamAuth struct {
	// Bearer: true if it wants a bearer token, false if anonymous callers
	// are allowed, absent if the card does not say.
	Bearer      *bool    `json:"bearer,omitempty"`
	Schemes     []string `json:"schemes"`
	Unsupported []string `json:"unsupported"`
}

// FrontFailure is an upstream failure as the owner sees it.
type FrontFailure struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Status int       `json:"status,omitempty"`
	Method string    `json:"method,omitempty"`
	Peer   string    `json:"peer,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// FrontVerification is the answer of POST /agents/{ref}/front/verify.
type FrontVerification struct {
	OK           bool   `json:"ok"`
	Reason       string `json:"reason"`
	Status       int    `json:"status,omitempty"`
	RPCErrorCode int    `json:"rpc_error_code,omitempty"`
	Detail       string `json:"detail,omitempty"`
	Method       string `json:"method"`
	// Binding is the binding the request went in: JSON-RPC, HTTP+JSON or
	// gRPC.
	Binding string `json:"binding,omitempty"`
	Sent    struct {
		Bearer  bool     `json:"bearer"`
		Headers []string `json:"headers"`
	} `json:"sent"`
}
