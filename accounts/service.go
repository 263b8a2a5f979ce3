package accounts

import (
	"context"
	"log/slog"
	"strings"

	"github.com/switchboard-dev/switchboard"
)

// Service changes accounts and their agents' credentials, and tells the
// instances that hold connections or streams of them.
type Service struct {
	accounts switchboard.AccountStore
	agents   switchboard.AgentStore
	tokens   switchboard.TokenStore
	bus      switchboard.Bus
	log      *slog.Logger
}

// New returns a Service over the stores. bus may be nil (nothing is
// told); log may be nil.
func New(accounts switchboard.AccountStore, agents switchboard.AgentStore, tokens switchboard.TokenStore,
	bus switchboard.Bus, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{accounts: accounts, agents: agents, tokens: tokens, bus: bus, log: log}
}

// notify tells the watchers of a subject to look again; a lost hint only
// delays them.
func (s *Service) notify(ctx context.Context, subject string) {
	if s.bus == nil {
		return
	}
	if err := s.bus.Notify(ctx, subject); err != nil {
		s.log.Warn("notify", "subject", subject, "err", err)
	}
}

// validName trims an account's name and checks its length (EINVALID with
// msg otherwise) and its characters (switchboard.CheckName:
// EUNPROCESSABLE).
func validName(name, msg string) (string, error) {
	n := strings.TrimSpace(name)
	if n == "" || len(n) > switchboard.MaxNameLen {
		return "", switchboard.Errorf(switchboard.EINVALID, msg, switchboard.MaxNameLen)
	}
	if err := switchboard.CheckName("name", n); err != nil {
		return "", err
	}
	return n, nil
}
