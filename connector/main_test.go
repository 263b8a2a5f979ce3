package connector_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// client's connections, handlers and heartbeats must all end with Run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
