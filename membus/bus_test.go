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
