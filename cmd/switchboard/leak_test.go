package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if goroutines outlive them: servers,
// connectors, --exec commands and NATS connections must all stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
