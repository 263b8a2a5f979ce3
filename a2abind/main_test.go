package a2abind_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: streams,
// followers and watches must all end with their request.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
