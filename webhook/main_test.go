package webhook_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// webhook call, and the dispatcher that makes it, must end when it stops.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
