package server

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/switchboard-dev/switchboard/audit"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// openAudit makes the audit log on the store, writing JSON lines too
// where Config.AuditLog says: "stdout", or a file it appends to (made
// 0600: the entries name accounts and addresses).
func (s *Server) openAudit(db *sqlstore.DB) error {
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
	return nil
}

// auditRetention is the audit log's retention, its default for 0.
func auditRetention(d time.Duration) time.Duration {
	if d <= 0 {
		return audit.DefaultRetention
	}
	return d
}
