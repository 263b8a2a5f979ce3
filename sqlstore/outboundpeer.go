package sqlstore

import (
	"context"
	"database/sql"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.OutboundPeerStore = (*DB)(nil)

// purposeOutboundPeerToken is the purpose a synced alias's token is sealed
// for: its column and its row, so that a sealed token copied to another
// agent's or alias's row does not open there.
func purposeOutboundPeerToken(agentID, alias string) string {
	return purposeOutboundPeerColumn + ":" + agentID + "/" + alias
}

// PutOutboundPeer implements switchboard.OutboundPeerStore.
func (db *DB) PutOutboundPeer(ctx context.Context, p *switchboard.OutboundPeer) (created bool, err error) {
	sealed, err := db.seal(purposeOutboundPeerToken(p.AgentID, p.Alias), p.Token)
	if err != nil {
		return false, err
	}
	now := db.Now().UTC()
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := agentExists(ctx, tx, db, p.AgentID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO outbound_peers (agent_id, alias, url, token, synced_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (agent_id, alias) DO NOTHING`, p.AgentID, p.Alias, p.URL, sealed, nanos(now))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			created = true
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE outbound_peers SET url = $1, token = $2, synced_at = $3 WHERE agent_id = $4 AND alias = $5`,
			p.URL, sealed, nanos(now), p.AgentID, p.Alias)
		return err
	})
	if err != nil {
		return false, err
	}
	p.SyncedAt = now
	return created, nil
}

// FindOutboundPeer implements switchboard.OutboundPeerStore.
func (db *DB) FindOutboundPeer(ctx context.Context, agentID, alias string) (*switchboard.OutboundPeer, error) {
	p := &switchboard.OutboundPeer{AgentID: agentID, Alias: alias}
	var synced int64
	err := db.read.QueryRowContext(ctx, `SELECT url, token, synced_at FROM outbound_peers WHERE agent_id = $1 AND alias = $2`,
		agentID, alias).Scan(&p.URL, &p.Token, &synced)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "no alias %q", alias)
	} else if err != nil {
		return nil, db.formatError(err)
	}
	p.SyncedAt = fromNanos(synced)
	db.openOutboundPeer(p)
	return p, nil
}

// FindOutboundPeers implements switchboard.OutboundPeerStore.
func (db *DB) FindOutboundPeers(ctx context.Context, agentID string) ([]*switchboard.OutboundPeer, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT alias, url, token, synced_at FROM outbound_peers WHERE agent_id = $1 ORDER BY alias`, agentID)
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	out := []*switchboard.OutboundPeer{}
	for rows.Next() {
		p := &switchboard.OutboundPeer{AgentID: agentID}
		var synced int64
		if err := rows.Scan(&p.Alias, &p.URL, &p.Token, &synced); err != nil {
			return nil, err
		}
		p.SyncedAt = fromNanos(synced)
		db.openOutboundPeer(p)
		out = append(out, p)
	}
	return out, rows.Err()
}

// openOutboundPeer opens the sealed token of p as read from its row. A
// token that does not open (the server's keys changed, or the row was
// altered or copied from another) is dropped and p marked Unreadable: the
// owner syncs the alias again, and nothing else stops working.
func (db *DB) openOutboundPeer(p *switchboard.OutboundPeer) {
	tok, err := db.open(purposeOutboundPeerToken(p.AgentID, p.Alias), p.Token)
	if err != nil || tok == "" {
		p.Token, p.Unreadable = "", true
		return
	}
	p.Token = tok
}

// DeleteOutboundPeer implements switchboard.OutboundPeerStore.
func (db *DB) DeleteOutboundPeer(ctx context.Context, agentID, alias string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM outbound_peers WHERE agent_id = $1 AND alias = $2`, agentID, alias)
		if err != nil {
			return err
		}
		if err := changedRow(res, switchboard.Errorf(switchboard.ENOTFOUND, "no alias %q", alias)); err != nil {
			return err
		}
		return nil
	})
}
