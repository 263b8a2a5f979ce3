package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync/atomic"
)

// SQLite compiles each SQL text into a program before it runs it, and the
// modernc driver does so on every call: a third of the store's CPU time went
// to parsing the same few dozen statements again. The types here keep each
// connection's compiled statements and reuse them. They wrap the driver's
// connector, so every query of the package benefits unchanged.
//
// A connection that offers database/sql no ExecContext or QueryContext of its
// own gets each statement through PrepareContext, runs it, and closes it; here
// PrepareContext hands out the kept statement and Close only marks it free.

// stmtCacheSize bounds the statements one connection keeps. The package's
// statements are a few dozen texts; dynamic ones (list filters) add a few
// more. Statements beyond the bound are prepared and finalized per call.
const stmtCacheSize = 256

// statementObserver, when set (by tests), is told the text of every
// statement run on SQLite: plan_test.go reads each one's query plan.
var statementObserver atomic.Pointer[func(query string)]

// cachingConnector opens driver connections that keep prepared statements.
type cachingConnector struct {
	base driver.Connector
}

// Connect opens a connection of the base connector and wraps it.
func (c *cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newCachingConn(conn)
}

// Driver returns the base connector's driver.
func (c *cachingConnector) Driver() driver.Driver { return c.base.Driver() }

// baseConn is what cachingConn needs of the driver's connection.
type baseConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a driver connection whose PrepareContext reuses statements.
// database/sql uses a connection from one goroutine at a time, so its fields
// need no lock.
type cachingConn struct {
	base  baseConn
	stmts map[string]*cachedStmt
}

func newCachingConn(conn driver.Conn) (driver.Conn, error) {
	b, ok := conn.(baseConn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("sqlstore: the SQLite driver's connection lacks a context method the statement cache needs")
	}
	return &cachingConn{base: b, stmts: make(map[string]*cachedStmt)}, nil
}

// Prepare prepares query without a context.
func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext returns the kept statement for query when it is free,
// preparing and keeping it the first time; a statement still in use (rows of
// an earlier call not yet closed) gets a fresh one of its own.
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if see := statementObserver.Load(); see != nil {
		(*see)(query)
	}
	if s, ok := c.stmts[query]; ok && !s.busy {
		s.busy = true
		return s, nil
	}
	st, err := c.base.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if _, kept := c.stmts[query]; kept || len(c.stmts) >= stmtCacheSize {
		return st, nil // closed (finalized) by its user
	}
	s, err := newCachedStmt(st)
	if err != nil {
		return st, nil
	}
	s.busy = true
	c.stmts[query] = s
	return s, nil
}

// Close finalizes the kept statements and closes the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.base.Close())
		delete(c.stmts, q)
	}
	errs = append(errs, c.base.Close())
	return errors.Join(errs...)
}

// Begin starts a transaction without a context.
func (c *cachingConn) Begin() (driver.Tx, error) { //nolint:staticcheck // driver.Conn requires it
	return c.base.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a transaction.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.base.BeginTx(ctx, opts)
}

// Ping checks the connection.
func (c *cachingConn) Ping(ctx context.Context) error { return c.base.Ping(ctx) }

// ResetSession is called before the connection is reused.
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.base.ResetSession(ctx) }

// IsValid reports whether the connection may be reused.
func (c *cachingConn) IsValid() bool { return c.base.IsValid() }

// baseStmt is what cachedStmt needs of the driver's statement.
type baseStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// cachedStmt is a kept statement. Close frees it for the next call instead
// of finalizing it; the connection finalizes it when it closes.
type cachedStmt struct {
	base baseStmt
	busy bool
}

func newCachedStmt(st driver.Stmt) (*cachedStmt, error) {
	b, ok := st.(baseStmt)
	if !ok {
		return nil, errors.New("sqlstore: the SQLite driver's statement lacks a context method")
	}
	return &cachedStmt{base: b}, nil
}

// Close marks the statement free; the driver has already reset it after its
// last step.
func (s *cachedStmt) Close() error {
	s.busy = false
	return nil
}

// NumInput returns the number of placeholders.
func (s *cachedStmt) NumInput() int { return s.base.NumInput() }

// Exec runs the statement without a context.
func (s *cachedStmt) Exec(args []driver.Value) (driver.Result, error) { //nolint:staticcheck // driver.Stmt requires it
	return s.base.Exec(args) //nolint:staticcheck
}

// Query runs the statement without a context.
func (s *cachedStmt) Query(args []driver.Value) (driver.Rows, error) { //nolint:staticcheck // driver.Stmt requires it
	return s.base.Query(args) //nolint:staticcheck
}

// ExecContext runs the statement.
func (s *cachedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.base.ExecContext(ctx, args)
}

// QueryContext runs the statement and returns its rows.
func (s *cachedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.base.QueryContext(ctx, args)
}
