// Package bustest is the contract test suite for switchboard.Bus. Every bus
// implementation runs it.
package bustest
