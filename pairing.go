package switchboard

import (
	"context"
	"time"
)

// PairingMode says who may approve a peer's request to pair with an agent
// (the OAuth 2.0 device authorization grant, package pairing).
type PairingMode string

// Pairing modes.
const (
	// PairingHuman lets the agent's owner approve (owner API, CLI, the
	// /device page). The default.
	PairingHuman PairingMode = "human"
	// PairingAgent also lets the agent approve, with its own agent token.
	PairingAgent PairingMode = "agent"
	// PairingOff serves no pairing endpoints: peer tokens come only from
	// the owner.
	PairingOff PairingMode = "off"
)

// ValidPairingMode reports whether m is a pairing mode.
func ValidPairingMode(m PairingMode) bool {
	return m == PairingHuman || m == PairingAgent || m == PairingOff
}

// PairingStatus is where a pairing request stands.
type PairingStatus string

// Pairing statuses. A redeemed request is deleted, so it has no status.
const (
	PairingPending  PairingStatus = "pending"
	PairingApproved PairingStatus = "approved"
	PairingDenied   PairingStatus = "denied"
)

// Pairing is a peer's request for a peer token of an agent (RFC 8628).
// The device code is stored only as its hash; the user code is not a
// secret (it is shown on two screens) and is stored as it is.
type Pairing struct {
	// DeviceHash is HashToken of the device code the client polls with.
	DeviceHash string
	// UserCode is the code a human types or follows: eight characters,
	// without the dash it is shown with.
	UserCode string
	// AgentID is the agent the peer asks to call.
	AgentID string
	// ClientName, ClientID and CardURL are what the requester claims to
	// be, cleaned; Requester is the address the request came from.
	ClientName, ClientID, CardURL, Requester string
	// Status is where the request stands.
	Status PairingStatus
	// Label is the label the token gets, set when approved.
	Label string
	// ReplacesLabel and ReplacesHash name the active peer token a
	// re-pairing request presented: an approval under the same label
	// replaces that token if it is still active then.
	ReplacesLabel, ReplacesHash string
	// Interval is how long the client must wait between polls; each poll
	// that comes sooner raises it by 5 seconds for good.
	Interval time.Duration
	// LastPollAt is when the client last polled; nil before the first poll.
	LastPollAt *time.Time
	// DecidedBy says who approved or denied: owner, agent or page.
	DecidedBy string
	// CreatedAt is when the request came; ExpiresAt when its codes end.
	CreatedAt, ExpiresAt time.Time
}

// PairingLimits bound the requests an agent may hold. Each address has a
// share of its own, so that a few addresses cannot lock everyone else
// out: the agent-wide bounds never refuse an address that has not had
// its turn (see CreatePairing).
type PairingLimits struct {
	// MaxPending is the most pending, unexpired requests an agent may
	// have. At it, a request from an address that holds fewer of them
	// than the address holding the most makes room: that address's
	// oldest pending request expires.
	MaxPending int
	// MaxPendingPerRequester is the most pending, unexpired requests one
	// address may have at one agent.
	MaxPendingPerRequester int
	// MaxPerHour is the most requests an agent may receive in an hour
	// from addresses that asked it already in that hour: an address's
	// first request to the agent in an hour is not refused for it.
	MaxPerHour int
	// MaxPerRequester is the most requests one address (Requester) may
	// make, to any agent, in RequesterWindow.
	MaxPerRequester int
	RequesterWindow time.Duration
}

// PairingPoll is the outcome of a client's poll (RFC 8628 section 3.5).
type PairingPoll string

// Pairing poll outcomes.
const (
	PollPending  PairingPoll = "authorization_pending"
	PollSlowDown PairingPoll = "slow_down"
	PollDenied   PairingPoll = "access_denied"
	PollExpired  PairingPoll = "expired_token"
	// PollApproved: the request was approved and is now redeemed (deleted);
	// the caller issues the token.
	PollApproved PairingPoll = "approved"
)

// PairingFilter selects pairing requests of one agent.
type PairingFilter struct {
	AgentID string
	// Status, when set, selects requests with that status.
	Status *PairingStatus
	// LiveAt, when set, selects requests that have not expired by then.
	LiveAt *time.Time
}

// PairingStore keeps pairing requests.
type PairingStore interface {
	// CreatePairing stores a new pending request (zero limits: no bound).
	// It returns ERATELIMITED when p.Requester holds
	// lim.MaxPendingPerRequester pending requests at the agent, or made
	// lim.MaxPerRequester in the window before p.CreatedAt, or asked the
	// agent already in the hour before it while the agent received
	// lim.MaxPerHour in that hour, or when the agent holds lim.MaxPending
	// pending requests and no address holds more of them than p.Requester.
	// When one does, the oldest pending request of the address holding the
	// most (the oldest such request of the first of equals) expires at
	// p.CreatedAt, in the same transaction, and p is stored. ECONFLICT
	// when the user code or device hash is taken.
	CreatePairing(ctx context.Context, p *Pairing, lim PairingLimits) error

	// FindPairingByUserCode returns the agent's request with the user
	// code, or ENOTFOUND.
	FindPairingByUserCode(ctx context.Context, agentID, userCode string) (*Pairing, error)

	// FindPairings returns the requests that match f, oldest first.
	FindPairings(ctx context.Context, f PairingFilter) ([]*Pairing, error)

	// DecidePairing approves (with the label) or denies the agent's
	// pending request with the user code, if it has not expired at at,
	// and returns it. ENOTFOUND when there is none; ECONFLICT when it was
	// decided already or has expired (a compare-and-swap on pending).
	DecidePairing(ctx context.Context, agentID, userCode string, status PairingStatus, label, decidedBy string, at time.Time) (*Pairing, error)

	// PollPairing records the client's poll at at and returns the request
	// as it stood with the outcome, in one transaction: a denied request
	// is deleted (PollDenied is answered once); an expired one is kept
	// (PollExpired) until DeletePairings; an approved one is left as it is
	// for RedeemPairing (PollApproved); a pending one polled sooner than
	// its interval after the last poll gets the interval raised by 5 s
	// (PollSlowDown). ENOTFOUND when the agent has no request with the
	// hash (a device code polled at another agent's address is unknown
	// there).
	PollPairing(ctx context.Context, agentID, deviceHash string, at time.Time) (*Pairing, PairingPoll, error)

	// RedeemPairing redeems the agent's approved request with the device
	// hash, unexpired at at, with tok, a new peer token of the agent (Hash,
	// Kind, AgentID and Label set), in one transaction: the request is
	// deleted (a compare-and-swap on approved: of two redemptions at once,
	// one wins) and tok is stored, its PeerID and CreatedAt set. With
	// replace, tok replaces the token the request presented (ReplacesHash,
	// ReplacesLabel), which must still be an active peer token of the agent
	// labelled tok.Label: it is revoked and tok keeps its PeerID.
	// ENOTFOUND when the agent has no such request (redeemed meanwhile,
	// expired, or not approved); ECONFLICT when, with replace, the
	// presented token is no longer active on that label (revoked or
	// rotated meanwhile) or, without it, an active token of the agent has
	// tok.Label. On an error nothing changes: the request stays approved
	// and no token is stored.
	RedeemPairing(ctx context.Context, agentID, deviceHash string, tok *Token, replace bool, at time.Time) error

	// DeletePairings deletes the requests that expired before the given
	// time and returns how many.
	DeletePairings(ctx context.Context, expiredBefore time.Time) (int, error)
}
