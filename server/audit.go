package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// openAudit makes the audit log on the store, writing JSON lines too
// where Config.AuditLog says: "stdout", or a file it appends to (made
// 0600: the entries name accounts and addresses).
func (s *Server) openAudit(ctx context.Context, db *sqlstore.DB) error {
	var lines io.Writer
	switch where := s.Config.AuditLog; where {
	case "":
	case "stdout", "-":
		lines = os.Stdout
	default:
		f, err := os.OpenFile(where, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("open the audit log file: %w", err)
		}
		s.auditFile, lines = f, f
	}
	s.Audit = &audit.Log{Store: db, Lines: lines, Logger: s.Logger.With("part", "audit")}
	return s.recordSealingKey(ctx, db)
}

// recordSealingKey records a change of the key that seals stored secrets
// (switchboard secret-key rotate, or a new --secret-key first): when the
// key this start seals with is not the last one the audit log names, an
// entry by the host names the new key by its id (never the key). The
// first start records its first key the same way.
func (s *Server) recordSealingKey(ctx context.Context, db *sqlstore.DB) error {
	ring, ok := db.Secrets.(*seal.Keyring)
	if !ok {
		return nil
	}
	current := ring.CurrentID()
	last, _, err := db.FindAuditEntries(ctx, switchboard.AuditFilter{Target: audit.KindKey, Limit: 1})
	if err != nil {
		return fmt.Errorf("read the audit log: %w", err)
	}
	if len(last) == 1 && last[0].TargetID == current {
		return nil
	}
	detail := "the first key"
	if len(last) == 1 {
		detail = "replaces key " + last[0].TargetID
	}
	s.Audit.Record(ctx, switchboard.AuditEntry{ActorKind: switchboard.AuditHost, Action: switchboard.AuditSecretKeyRotate,
		TargetKind: audit.KindKey, TargetID: current, Detail: detail + "; stored secrets sealed again at this start"})
	return nil
}

// auditRetention is the audit log's retention, its default for 0.
func auditRetention(d time.Duration) time.Duration {
	if d <= 0 {
		return audit.DefaultRetention
	}
	return d
}
