package audit

import (
	"context"
	"fmt"
	"time"
)

// RunPruner forgets the entries older than retention, at once and then
// every interval (0: DefaultPruneInterval), until ctx ends; it returns nil
// then. A failed deletion is returned, for the server's supervisor to log
// and run the loop again. Every instance may run it: deleting what another
// already deleted deletes nothing.
func (l *Log) RunPruner(ctx context.Context, retention, interval time.Duration) error {
	if retention <= 0 {
		return fmt.Errorf("audit retention %v: must be positive", retention)
	}
	if interval <= 0 {
		interval = DefaultPruneInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := l.Store.DeleteAuditEntries(ctx, l.now().Add(-retention))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("prune the audit log: %w", err)
		}
		if n > 0 {
			l.logger().Info("audit entries past their retention deleted", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
