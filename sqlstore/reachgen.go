package sqlstore

import (
	"context"
	"database/sql"
)

// Discovery decides from views of ranked candidates (network/view.go) and
// may take a pick without reading the store again only while nothing that
// could make an agent stop being a candidate has committed since the
// ranking. DiscoveryGeneration tells it: the identity cache's generation
// moves on with every change to accounts, agents (approval, the
// accepts-tasks switch, mode, skills, deletion) and memberships, and the
// reach generation with every change that can take an agent's reach away
// (reachSQL): a connector session ended, a webhook or front delivery put
// back in the queue after a failure or a lost holder. Passing time (a
// session no longer renewed) is the caller's to check, from the session's
// last renewal in the ranking. On PostgreSQL the reach changes of other
// instances arrive as notifications on the identities' channel, with
// their own payload, and the generation is unknown while nobody listens.

// reachPayloadSuffix ends the payload of a reach change's notification
// (the schema, then this), so that it moves only the reach generation.
const reachPayloadSuffix = "/reach"

// notifyReachSQL sends a reach change's notification from a write
// transaction (PostgreSQL delivers it when the transaction commits).
const notifyReachSQL = `SELECT pg_notify('` + identityChannel + `', current_schema() || '` + reachPayloadSuffix + `')`

// DiscoveryGeneration implements switchboard.CommunityStore.
func (db *DB) DiscoveryGeneration() (uint64, bool) {
	c := db.identities
	if c == nil || c.off.Load() {
		return 0, false
	}
	return c.gen.Load() + c.reach.Load(), true
}

// writeReach runs fn as a write transaction that may take an agent's
// reach away, and moves the reach generation on once it has committed (or
// failed).
func (db *DB) writeReach(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return db.notifyReach(ctx, tx)
	})
	db.reachMoved()
	return err
}

// notifyReach tells the other instances, when tx commits, that an agent's
// reach may have been taken away (PostgreSQL; nothing on SQLite, whose
// one writer is this process's).
func (db *DB) notifyReach(ctx context.Context, tx *sql.Tx) error {
	if db.dialect.identityNotify == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, notifyReachSQL)
	return err
}

// reachMoved moves this instance's reach generation on, after a write
// that may have taken an agent's reach away has committed or failed.
func (db *DB) reachMoved() {
	if db.identities != nil {
		db.identities.reach.Add(1)
	}
}
