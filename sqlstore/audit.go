package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.AuditStore = (*DB)(nil)

const auditColumns = `id, at, account_id, actor_kind, actor_id, action, target_kind, target_id, outcome, client_addr, detail`

// CreateAuditEntry implements switchboard.AuditStore.
func (db *DB) CreateAuditEntry(ctx context.Context, e *switchboard.AuditEntry) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			e.ID, nanos(e.At), e.AccountID, string(e.ActorKind), e.ActorID, string(e.Action), e.TargetKind, e.TargetID,
			string(e.Outcome), e.ClientAddr, e.Detail)
		return err
	})
}

// FindAuditEntries implements switchboard.AuditStore.
func (db *DB) FindAuditEntries(ctx context.Context, f switchboard.AuditFilter) ([]*switchboard.AuditEntry, string, error) {
	w := &where{}
	if f.AccountID != nil {
		w.add("account_id = ?", *f.AccountID)
	}
	if !f.Since.IsZero() {
		w.add("at >= ?", nanos(f.Since))
	}
	if f.Actor != "" {
		w.add("(actor_id = ? OR actor_kind = ?)", f.Actor, f.Actor)
	}
	if f.Target != "" {
		w.add("(target_id = ? OR target_kind = ?)", f.Target, f.Target)
	}
	if f.Cursor != "" {
		at, id, err := decodeAuditCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		w.add("at <= ? AND (at < ? OR id < ?)", at, at, id)
	}
	limit := f.Limit
	if limit <= 0 || limit > switchboard.MaxAuditPage {
		limit = switchboard.MaxAuditPage
	}
	// One more than the page says whether another follows.
	rows, err := db.read.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log`+w.String()+
		fmt.Sprintf(` ORDER BY at DESC, id DESC LIMIT %d`, limit+1), w.args...)
	if err != nil {
		return nil, "", db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.AuditEntry
	for rows.Next() {
		var e switchboard.AuditEntry
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.AccountID, &e.ActorKind, &e.ActorID, &e.Action, &e.TargetKind, &e.TargetID,
			&e.Outcome, &e.ClientAddr, &e.Detail); err != nil {
			return nil, "", db.formatError(err)
		}
		e.At = fromNanos(at)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", db.formatError(err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = encodeAuditCursor(nanos(last.At), last.ID)
	}
	return out, next, nil
}

// DeleteAuditEntries implements switchboard.AuditStore.
func (db *DB) DeleteAuditEntries(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_log WHERE at < $1`, nanos(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// encodeAuditCursor is the cursor after the entry at at with id: opaque to
// callers, URL-safe.
func encodeAuditCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + ":" + id))
}

// decodeAuditCursor reads a cursor of encodeAuditCursor; anything else is
// EINVALID.
func decodeAuditCursor(c string) (int64, string, error) {
	bad := switchboard.Errorf(switchboard.EINVALID, "cursor is not one this server gave")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	atText, id, ok := strings.Cut(string(b), ":")
	if !ok || id == "" {
		return 0, "", bad
	}
	at, err := strconv.ParseInt(atText, 10, 64)
	if err != nil {
		return 0, "", bad
	}
	return at, id, nil
}
