package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/network"
	"github.com/switchboard-dev/switchboard/session"
)

// startSessions starts the live sessions between connected agents on the
// bus's carrier (carrier is the bus as opened, before any wrapper of its
// hints).
func (m *Main) startSessions(ctx context.Context, cfg Config, carrier switchboard.Carrier) error {
	if carrier == nil {
		return errors.New("start live sessions: the bus carries no messages")
	}
	scfg := session.Config{}
	switch {
	case cfg.ReconnectGrace > 0:
		scfg.Grace = cfg.ReconnectGrace
	case cfg.ReconnectGrace < 0: // --reconnect-grace 0: a session ends as its agent's socket drops
		scfg.Grace = time.Millisecond
	}
	m.Sessions = session.New(session.Deps{Carrier: carrier, Agents: m.DB, Policy: sessionPolicy{m.Network},
		Logger: m.Logger, InstanceID: m.Tasks.InstanceID}, scfg)
	m.metrics.registerSessions(m.Sessions)
	if err := m.Sessions.Start(ctx); err != nil {
		return fmt.Errorf("start live sessions: %w", err)
	}
	return nil
}

// sessionPolicy is the network's rule for live sessions: two agents may
// hold one when both take part in the network (approved) and they share
// a community.
type sessionPolicy struct{ net *network.Service }

// MaySession implements session.Policy.
func (p sessionPolicy) MaySession(ctx context.Context, from, to *switchboard.Agent) (bool, error) {
	if !from.Approved || !to.Approved {
		return false, nil
	}
	return p.net.ShareCommunity(ctx, from.ID, to.ID)
}
