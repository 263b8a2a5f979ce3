package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/membus"
	"github.com/switchboard-dev/switchboard/natsbus"
)

// openBus starts the configured bus (and for "embedded" its NATS server),
// wrapped so that the process counts its hints, and returns the carrier of
// the live sessions' frames: the bus as opened, before any wrapper.
func (s *Server) openBus() (switchboard.Carrier, error) {
	cfg := s.Config
	opts := natsbus.Options{Prefix: cfg.BusPrefix, Logger: s.Logger}
	var bus switchboard.Bus
	switch name := strings.TrimSpace(cfg.Bus); {
	case name == "" || name == "memory":
		bus = membus.New()
	case name == "embedded":
		ns, err := natsbus.StartServer(cfg.NATS)
		if err != nil {
			return nil, err
		}
		s.nats = ns
		b, err := natsbus.ConnectInProcess(ns, opts)
		if err != nil {
			return nil, err
		}
		bus = b
		if cfg.NATS.Listen != "" || cfg.NATS.ClusterListen != "" {
			s.Logger.Info("embedded NATS server", "clients", ns.ClientURL(), "cluster", cfg.NATS.ClusterListen, "routes", cfg.NATS.Routes)
		}
	case strings.HasPrefix(name, "nats://") || strings.HasPrefix(name, "tls://"):
		b, err := natsbus.Connect(name, opts)
		if err != nil {
			return nil, err
		}
		bus = b
	default:
		return nil, fmt.Errorf("--bus: want memory, embedded or nats:// URLs, got %q", truncateFlag(name))
	}
	s.metrics.registerBus(bus)
	s.Bus = &meteredBus{Bus: bus, pm: s.metrics}
	carrier, ok := bus.(switchboard.Carrier)
	if !ok {
		return nil, errors.New("start live sessions: the bus carries no messages")
	}
	return carrier, nil
}

// busName names the bus for the log.
func busName(bus string) string {
	switch {
	case bus == "" || bus == "memory":
		return "memory"
	case bus == "embedded":
		return "embedded nats"
	}
	return "nats"
}

// truncateFlag shortens a flag value for an error message; a URL may hold
// credentials, so only its first 12 characters are shown.
func truncateFlag(v string) string {
	if len(v) <= 12 {
		return v
	}
	return v[:12] + "…"
}

// NATSClusterAddr returns the address where the embedded NATS server (Bus
// "embedded") accepts routes from the other instances' servers, or "".
func (s *Server) NATSClusterAddr() string {
	if s.nats == nil || s.nats.ClusterAddr() == nil {
		return ""
	}
	return s.nats.ClusterAddr().String()
}
