package ownerapi

import "time"

// AuditEntry is one entry of the audit log, an item of GET /audit
// (docs/operating.md, "Audit log").
type AuditEntry struct {
	ID         string    `json:"id"`
	At         time.Time `json:"at"`
	AccountID  string    `json:"account_id,omitempty"`
	ActorKind  string    `json:"actor_kind"`
	ActorID    string    `json:"actor_id,omitempty"`
	Action     string    `json:"action"`
	TargetKind string    `json:"target_kind,omitempty"`
	TargetID   string    `json:"target_id,omitempty"`
	Outcome    string    `json:"outcome"`
	ClientAddr string    `json:"client_addr,omitempty"`
	Detail     string    `json:"detail,omitempty"`
}

// AuditPage is the answer of GET /audit: entries newest first, and the
// cursor of the next page (pass it as ?cursor=), empty on the last.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	Next    string       `json:"next,omitempty"`
}
