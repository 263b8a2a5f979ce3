package pairing

import (
	"context"
	"time"
)

// SweepEvery is how often RunSweeper deletes what has expired.
const SweepEvery = time.Hour

// RunSweeper deletes, every interval (0: SweepEvery) until ctx ends, the
// requests that expired more than KeepExpired ago and the counts of the
// flood limits older than that. Authorize sweeps too; this removes them,
// with the requesters' addresses they hold, when no new request comes.
// Every instance may run it: a sweep is one idempotent statement.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		interval = SweepEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if n, err := s.Store.DeletePairings(ctx, s.cfg.Now().UTC().Add(-KeepExpired)); err != nil {
			s.Logger.Warn("sweep expired pairing requests", "err", err)
		} else if n > 0 {
			s.Logger.Info("swept expired pairing requests", "count", n)
		}
	}
}
