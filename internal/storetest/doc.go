// Package storetest is the contract test suite for the Switchboard store
// interfaces. Every store implementation runs it (sqlstore for SQLite, and
// for PostgreSQL when a DSN is set), so that all of them behave alike.
package storetest
