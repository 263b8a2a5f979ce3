package membus_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/internal/bustest"
	"github.com/switchboard-dev/switchboard/membus"
)

func TestCarrierContract(t *testing.T) {
	bustest.RunCarrier(t, func(*testing.T) bustest.CarrierBus { return membus.New() })
}

// In one process every "instance" is the same bus.
func TestCarrierContractAcross(t *testing.T) {
	bustest.RunCarrierAcross(t, func(*testing.T) (bustest.CarrierBus, bustest.CarrierBus) { b := membus.New(); return b, b })
}
