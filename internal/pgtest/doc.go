// Package pgtest gives each test a schema of its own in the PostgreSQL
// database named by SWITCHBOARD_TEST_POSTGRES, so tests run in parallel and
// leave nothing behind.
package pgtest
