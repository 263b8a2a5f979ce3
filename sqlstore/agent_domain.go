package sqlstore

import (
	"context"
	"database/sql"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Agent domains (docs/agents.md, "Agent domains"): agents.domain holds an
// agent's host name or NULL, under a unique index. Create and update look
// for another holder first, inside their transaction, so that the usual
// refusal names the domain; the index settles two writers at once.

// nullString is s as a nullable column holds it: NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// domainTaken is the refusal of a domain another agent holds. It does not
// say which agent: the caller may not own it.
func domainTaken(domain string) error {
	return switchboard.Errorf(switchboard.EUNPROCESSABLE, "%s is already the domain of another agent", domain)
}

// violatesDomain reports whether a unique violation is the domain index's
// (agents_domain; SQLite names the column agents.domain).
func violatesDomain(err error) bool {
	return strings.Contains(err.Error(), "domain")
}

// checkDomainFree refuses domain when an agent other than id holds it.
func (db *DB) checkDomainFree(ctx context.Context, tx *sql.Tx, id, domain string) error {
	if domain == "" {
		return nil
	}
	var holder string
	err := tx.QueryRowContext(ctx, `SELECT id FROM agents WHERE domain = $1`, domain).Scan(&holder)
	switch {
	case err == sql.ErrNoRows:
		return nil
	case err != nil:
		return err
	case holder != id:
		return domainTaken(domain)
	}
	return nil
}

// checkDomainUpdate checks the domain upd gives g, if any: free, and
// within upd.DomainQuota when g holds none yet. The quota is counted with
// the account's row locked (PostgreSQL; SQLite has one writer), so that
// two updates at once cannot both pass it.
func (db *DB) checkDomainUpdate(ctx context.Context, tx *sql.Tx, g *switchboard.Agent, upd switchboard.AgentUpdate) error {
	if upd.Domain == nil || *upd.Domain == "" || *upd.Domain == g.Domain {
		return nil
	}
	if err := db.checkDomainFree(ctx, tx, g.ID, *upd.Domain); err != nil {
		return err
	}
	if upd.DomainQuota == nil || g.Domain != "" {
		return nil // a change of domain keeps the count
	}
	var id string
	if err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1`+db.forUpdate(""), g.AccountID).Scan(&id); err != nil {
		return err
	}
	var held int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM agents WHERE account_id = $1 AND domain IS NOT NULL AND id <> $2`,
		g.AccountID, g.ID).Scan(&held); err != nil {
		return err
	}
	if q := *upd.DomainQuota; held >= q {
		if q == 0 {
			return switchboard.Errorf(switchboard.EUNPROCESSABLE, "this account may not give its agents domains")
		}
		return switchboard.Errorf(switchboard.EUNPROCESSABLE, "the account's agents hold %d domains, the most it may; remove one first", held)
	}
	return nil
}
