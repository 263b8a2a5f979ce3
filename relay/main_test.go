package relay_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// dispatcher, the sweeper and every wait must end with their context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
