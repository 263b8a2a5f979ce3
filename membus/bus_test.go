package membus_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/bustest"
	"github.com/switchboard-dev/switchboard/membus"
)

func TestContract(t *testing.T) {
	bustest.Run(t, func(*testing.T) switchboard.Bus { return membus.New() })
}

// In one process every "instance" is the same bus.
func TestContractAcross(t *testing.T) {
	bustest.RunAcross(t, func(*testing.T) (switchboard.Bus, switchboard.Bus) { b := membus.New(); return b, b })
}
