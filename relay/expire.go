package relay

import (
	"context"
	"fmt"
	"time"
)

// DefaultExpiryInterval is how often RunTaskExpiry looks for finished
// tasks past the retention period.
const DefaultExpiryInterval = time.Hour

// ExpiryBatch is how many tasks one transaction of ExpireFinishedTasks
// deletes at most: small enough that no lock is held for long.
const ExpiryBatch = 200

// RunTaskExpiry deletes, once at start and then every interval until ctx
// ends, the tasks that finished more than retention ago
// (ExpireFinishedTasks). A retention of 0 or less keeps tasks forever and
// returns at once. Several instances may run it at once: each batch is
// one transaction, and a task is deleted once.
func (s *Service) RunTaskExpiry(ctx context.Context, retention, interval time.Duration) error {
	if retention <= 0 {
		return nil
	}
	if interval <= 0 {
		interval = DefaultExpiryInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		n, err := s.ExpireFinishedTasks(ctx, retention)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("expire finished tasks", "err", err)
		} else if n > 0 {
			s.log.Info("expired finished tasks", "tasks", n, "retention", retention)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// ExpireFinishedTasks deletes the tasks that reached a final state more
// than retention before now, with everything that belongs to them, in
// batches of ExpiryBatch, and returns how many it deleted. It stops
// between batches when ctx ends.
func (s *Service) ExpireFinishedTasks(ctx context.Context, retention time.Duration) (int, error) {
	cutoff := s.Now().UTC().Add(-retention)
	total := 0
	for ctx.Err() == nil {
		n, err := s.tasks.ExpireTasks(ctx, cutoff, ExpiryBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("expire tasks finished before %s: %w", cutoff.Format(time.RFC3339), err)
		}
		if n < ExpiryBatch {
			break
		}
	}
	return total, nil
}
