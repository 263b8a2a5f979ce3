package switchboard

import (
	"context"
	"time"
)

// AuditEntry is one security-relevant change, or an attempt at one, kept
// in the audit log (docs/operating.md, "Audit log"): who did what to what,
// when, from where, and how it ended. It never holds a secret: no token,
// password, bearer value or credential header value, only what names them
// (a token's kind and label, a header's name).
type AuditEntry struct {
	// ID is the entry's id, given when it is recorded; with At it orders
	// the log (newest first) and makes its cursor.
	ID string
	// At is when it happened.
	At time.Time
	// AccountID is the account the entry belongs to: the owner of the
	// target (the account of the agent changed, the account itself). Its
	// owner may read the entry; the operator reads every entry. Empty for
	// entries about the deployment only the operator sees (a secret-key
	// rotation, a sign-in with an unknown token).
	AccountID string
	// ActorKind is who acted (AuditOperator, AuditOwner, AuditAgent,
	// AuditPeer, AuditMCPClient, AuditAnonymous); ActorID names it: an
	// account's id, an agent's handle, a token's label, or nothing.
	ActorKind AuditActorKind
	ActorID   string
	// Action is what was done (AuditSignIn, AuditTokenIssue…).
	Action AuditAction
	// TargetKind and TargetID name what was acted on: an account by its
	// id, an agent by its handle, a community by its name, a token by its
	// kind and label ("peer:ci"), a pairing by its user code.
	TargetKind string
	TargetID   string
	// Outcome is AuditOK, AuditDenied (refused: no right, bad credentials)
	// or AuditFailed (refused for another reason, or an error).
	Outcome AuditOutcome
	// ClientAddr is the address the request came from (package
	// clientaddr); empty for a change made on the server's host (the CLI
	// on the data directory).
	ClientAddr string
	// Detail says more in words, without secrets: an error's code, a
	// token's label, a community's settings.
	Detail string
}

// AuditActorKind is the kind of who acted.
type AuditActorKind string

// Actor kinds.
const (
	AuditOperator  AuditActorKind = "operator"   // the deployment's operator account
	AuditOwner     AuditActorKind = "owner"      // an owner account
	AuditAgent     AuditActorKind = "agent"      // an agent with its agent token
	AuditPeer      AuditActorKind = "peer"       // an outside caller of one agent (pairing)
	AuditMCPClient AuditActorKind = "mcp_client" // an MCP client (OAuth)
	AuditAnonymous AuditActorKind = "anonymous"  // not signed in, or not yet
	AuditHost      AuditActorKind = "host"       // someone on the server's host, with its data directory
)

// AuditAction is what an audit entry records.
type AuditAction string

// Audited actions.
const (
	AuditSignIn           AuditAction = "signin"            // the console's sign-in
	AuditTokenIssue       AuditAction = "token.issue"       // a token given (peer, MCP, agent)
	AuditTokenRotate      AuditAction = "token.rotate"      // a token replaced by a new one
	AuditTokenRevoke      AuditAction = "token.revoke"      // a token ended
	AuditAgentCreate      AuditAction = "agent.create"      // an agent made
	AuditAgentDelete      AuditAction = "agent.delete"      // an agent deleted
	AuditAgentApprove     AuditAction = "agent.approve"     // an agent let take part in the network
	AuditAgentUnapprove   AuditAction = "agent.unapprove"   // an agent's approval taken back
	AuditCommunityChange  AuditAction = "community.change"  // a community made or its settings changed
	AuditCommunityJoin    AuditAction = "community.join"    // an agent joined a community
	AuditCommunityLeave   AuditAction = "community.leave"   // an agent left a community
	AuditPairingApprove   AuditAction = "pairing.approve"   // a pairing request approved
	AuditPairingDeny      AuditAction = "pairing.deny"      // a pairing request denied
	AuditMCPConsent       AuditAction = "mcp.consent"       // an owner's answer to an MCP client
	AuditMCPGrantRevoke   AuditAction = "mcp.grant_revoke"  // an MCP client's grant ended
	AuditAccountCreate    AuditAction = "account.create"    // an account made
	AuditAccountDisable   AuditAction = "account.disable"   // an account disabled
	AuditAccountEnable    AuditAction = "account.enable"    // an account enabled again
	AuditAccountRename    AuditAction = "account.rename"    // an account renamed
	AuditSecretKeyRotate  AuditAction = "secret_key.rotate" // the key that seals secrets replaced
	AuditFrontCredentials AuditAction = "front.credentials" // a front's credentials set or cleared
)

// AuditOutcome is how an audited action ended.
type AuditOutcome string

// Outcomes.
const (
	AuditOK     AuditOutcome = "ok"
	AuditDenied AuditOutcome = "denied"
	AuditFailed AuditOutcome = "failed"
)

// AuditFilter selects audit entries. Zero fields select everything.
type AuditFilter struct {
	// AccountID, if set, keeps the entries of that account only (what an
	// owner may read).
	AccountID *string
	// Since keeps entries at or after it.
	Since time.Time
	// Actor keeps entries whose ActorID or ActorKind is it; Target those
	// whose TargetID or TargetKind is it.
	Actor, Target string
	// Cursor continues a listing after the last entry of the page it came
	// with (AuditPage.Next); empty starts at the newest.
	Cursor string
	// Limit bounds the page (default and most: MaxAuditPage).
	Limit int
}

// MaxAuditPage is the most entries one page of the audit log holds, and
// its default.
const MaxAuditPage = 200

// AuditStore keeps the audit log.
type AuditStore interface {
	// CreateAuditEntry stores e (ID and At set by the caller).
	CreateAuditEntry(ctx context.Context, e *AuditEntry) error
	// FindAuditEntries returns the entries f selects, newest first, at most
	// f.Limit, and the cursor of the next page ("" when this was the
	// last). A cursor the store did not give returns EINVALID.
	FindAuditEntries(ctx context.Context, f AuditFilter) ([]*AuditEntry, string, error)
	// DeleteAuditEntries forgets the entries older than before and returns
	// how many.
	DeleteAuditEntries(ctx context.Context, before time.Time) (int, error)
}

// AuditLog records audit entries. Record never fails the action it
// records: an entry that cannot be stored is logged as an error.
type AuditLog interface {
	// Record stores e, with its ID and time set if empty.
	Record(ctx context.Context, e AuditEntry)
}
