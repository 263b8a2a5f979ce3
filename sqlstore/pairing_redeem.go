package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// RedeemPairing implements switchboard.PairingStore. The request is
// deleted first: on PostgreSQL a second redemption waits on its row and
// then finds it gone; the token to replace is locked while it is checked,
// so a revocation or rotation either comes before (and the check fails)
// or after (and ends the new token, as it would any).
func (db *DB) RedeemPairing(ctx context.Context, agentID, deviceHash string, tok *switchboard.Token, replace bool, at time.Time) error {
	if tok.Kind != switchboard.TokenPeer || tok.AgentID != agentID || tok.Community != "" {
		return switchboard.Errorf(switchboard.EINVALID, "a pairing redeems a peer token of its agent")
	}
	now := db.Now().UTC()
	return db.writeIdentities(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var replacesLabel, replacesHash string
		err := tx.QueryRowContext(ctx, `DELETE FROM pairings
			WHERE device_hash = $1 AND agent_id = $2 AND status = 'approved' AND expires_at > $3
			RETURNING replaces_label, replaces_hash`, deviceHash, agentID, nanos(at)).Scan(&replacesLabel, &replacesHash)
		if err == sql.ErrNoRows {
			return switchboard.Errorf(switchboard.ENOTFOUND, "no approved pairing request with that device code")
		} else if err != nil {
			return err
		}
		peerID := switchboard.NewID()
		if replace {
			if peerID, err = revokeReplaced(ctx, db, tx, agentID, replacesLabel, replacesHash, tok.Label, now); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, '', $5, $6, $7, NULL, NULL, '', '', NULL)`,
			tok.Hash, string(tok.Kind), tok.AccountID, tok.AgentID, tok.Label, peerID, nanos(now))
		if db.dialect.uniqueViolation(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "an active token labelled %q already exists", tok.Label)
		} else if err != nil {
			return err
		}
		tok.CreatedAt, tok.RevokedAt, tok.PeerID = now, nil, peerID
		return nil
	})
}

// revokeReplaced revokes the token a re-pairing presented, if it is still
// an active peer token of the agent labelled label (the label the new
// token gets), and returns its peer id; ECONFLICT otherwise.
func revokeReplaced(ctx context.Context, db *DB, tx *sql.Tx, agentID, replacesLabel, replacesHash, label string, now time.Time) (string, error) {
	gone := switchboard.Errorf(switchboard.ECONFLICT, "the token the re-pairing presented is no longer active on %q", label)
	if replacesHash == "" || replacesLabel != label {
		return "", gone
	}
	var peerID string
	err := tx.QueryRowContext(ctx, `SELECT peer_id FROM tokens
		WHERE hash = $1 AND kind = 'peer' AND agent_id = $2 AND community = '' AND label = $3 AND revoked_at IS NULL`+db.forUpdate(""),
		replacesHash, agentID, label).Scan(&peerID)
	if err == sql.ErrNoRows {
		return "", gone
	} else if err != nil {
		return "", err
	}
	_, err = tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = $1 WHERE hash = $2`, nanos(now), replacesHash)
	return peerID, err
}
