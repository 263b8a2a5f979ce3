// Package audit records the audit log (docs/operating.md, "Audit log"):
// every security-relevant change, or attempt at one, that the faces
// (httpapi, dashboard, mcpserver) and the CLI make, each one call to
// Log.Record with who acted, on what, from which address and how it ended.
// The entries are stored (switchboard.AuditStore) and, if asked, also
// written as JSON lines (serve --audit-log). Log.RunPruner forgets entries
// older than the audit log's own retention (serve --audit-retention).
//
// An entry never holds a secret: the faces pass what names a credential
// (its kind and label), never its value, and Record drops a detail that
// looks like one (redact.Secrets) as a last guard.
package audit
