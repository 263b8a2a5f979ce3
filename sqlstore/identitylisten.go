package sqlstore

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// On PostgreSQL several instances share the database, so a change one of
// them makes must end the identity cache's generation on all of them. Each
// identity write sends a notification on identityChannel in its own
// transaction (PostgreSQL delivers it when, and only if, the transaction
// commits), and every instance holds one connection that listens on the
// channel and ends its generation on each notification. The cache is used
// only while that connection listens: while it is down, or being set up
// again, every lookup reads the database, and once it listens again the
// generation moves on, so nothing read before a notification that may
// have been missed is used. A change made on another instance is thus
// seen there as soon as its notification arrives (a millisecond on a
// local network), and at most identityTTL later if the listening
// connection is cut without the instance noticing.

// identityChannel is the channel of the notifications.
const identityChannel = "switchboard_identities"

// notifyIdentitiesSQL sends the notification from a write transaction.
// Its payload is the schema, so that deployments in different schemas of
// one database leave each other's caches alone.
const notifyIdentitiesSQL = `SELECT pg_notify('` + identityChannel + `', current_schema())`

// listenBackoff bounds the wait between attempts to listen again.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// identityListener runs the listening connection of one PostgreSQL store.
type identityListener struct {
	cfg    *pgx.ConnConfig
	cache  *identityCache
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
	pid    atomic.Uint32 // the listening connection's server process (for tests)
	heard  atomic.Int64  // notifications for this schema (for tests)
}

// startIdentityListener starts listening for cache on a connection made
// with cfg. The cache stays off until the first LISTEN has taken effect.
func startIdentityListener(cfg *pgx.ConnConfig, cache *identityCache, log *slog.Logger) *identityListener {
	cache.pause()
	ctx, cancel := context.WithCancel(context.Background())
	l := &identityListener{cfg: cfg.Copy(), cache: cache, log: log, cancel: cancel, done: make(chan struct{})}
	go l.run(ctx)
	return l
}

// close stops listening and waits for the connection to close.
func (l *identityListener) close() {
	l.cancel()
	<-l.done
}

func (l *identityListener) run(ctx context.Context) {
	defer close(l.done)
	wait := listenBackoffMin
	for ctx.Err() == nil {
		start := time.Now()
		err := l.listen(ctx)
		l.cache.pause()
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > listenBackoffMax {
			wait = listenBackoffMin // it had listened for a while: try again soon
		}
		l.log.Warn("sqlstore: the identity cache is off until PostgreSQL notifications can be heard again", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, listenBackoffMax)
	}
}

// listen connects, listens, turns the cache on and ends its generation on
// every notification until the connection fails or ctx ends.
func (l *identityListener) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(ctx)
	}()
	l.pid.Store(conn.PgConn().PID())
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+identityChannel); err != nil {
		return err
	}
	// Changes made while nobody listened were not heard: what was read
	// before now is not used again.
	l.cache.resume()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Payload {
		case schema:
			l.cache.changed()
			l.heard.Add(1)
		case schema + reachPayloadSuffix:
			l.cache.reach.Add(1)
		}
	}
}
