package main

import (
	"time"

	"github.com/switchboard-dev/switchboard/hub"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// newNetwork returns the network service of the configuration: approval,
// the liveness window of the hub's heartbeat, the reconnect grace.
func (m *Main) newNetwork(cfg Config, db *sqlstore.DB) *network.Service {
	n := network.New(db, m.Tasks)
	n.RequireApproval = cfg.RequireApproval
	n.HeartbeatInterval = hub.DefaultHeartbeatInterval
	if cfg.Heartbeat > 0 {
		n.HeartbeatInterval = cfg.Heartbeat
	}
	switch {
	case cfg.ReconnectGrace > 0:
		n.ReconnectGrace = cfg.ReconnectGrace
	case cfg.ReconnectGrace < 0:
		n.ReconnectGrace = 0
	}
	return n
}

// graceOrNone turns serve's --reconnect-grace into Config.ReconnectGrace,
// where 0 means the default: a flag of 0 is no grace.
func graceOrNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
