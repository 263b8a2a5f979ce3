package sqlstore

import (
	"context"
	"database/sql"

	"github.com/switchboard-dev/switchboard"
)

var _ switchboard.PublishedCardStore = (*DB)(nil)

// PublishCard implements switchboard.PublishedCardStore.
func (db *DB) PublishCard(ctx context.Context, c *switchboard.PublishedCard) error {
	if len(c.Card) > switchboard.MaxPublishedCard {
		return switchboard.Errorf(switchboard.EINVALID, "the card is over %d bytes", switchboard.MaxPublishedCard)
	}
	target, err := db.seal(purposePublishedTarget, c.Target)
	if err != nil {
		return err
	}
	c.UpdatedAt = db.Now().UTC()
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := agentExists(ctx, tx, db, c.AgentID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO published_cards (agent_id, target, card, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (agent_id) DO UPDATE SET target = excluded.target, card = excluded.card, updated_at = excluded.updated_at`,
			c.AgentID, target, string(c.Card), nanos(c.UpdatedAt))
		return err
	})
}

// ForgetPublishedCard implements switchboard.PublishedCardStore.
func (db *DB) ForgetPublishedCard(ctx context.Context, agentID string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM published_cards WHERE agent_id = $1`, agentID)
		return err
	})
}

// FindPublishedCard implements switchboard.PublishedCardStore.
func (db *DB) FindPublishedCard(ctx context.Context, agentID string) (*switchboard.PublishedCard, error) {
	c := &switchboard.PublishedCard{AgentID: agentID}
	var card string
	var updated int64
	err := db.read.QueryRowContext(ctx, `SELECT target, card, updated_at FROM published_cards WHERE agent_id = $1`, agentID).
		Scan(&c.Target, &card, &updated)
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "the agent has no published card")
	} else if err != nil {
		return nil, db.formatError(err)
	}
	if c.Target, err = db.open(purposePublishedTarget, c.Target); err != nil {
		return nil, err
	}
	c.Card, c.UpdatedAt = []byte(card), fromNanos(updated)
	return c, nil
}
