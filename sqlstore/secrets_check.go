package sqlstore

import (
	"context"
	"fmt"
)

// CheckSecrets reports, without writing anything, whether every sealed
// value the store keeps opens with its Sealer: the first that does not
// fails it (the error wraps seal's UnknownKeyError when its key is not
// among the Sealer's). A synced alias's token, which its owner can upload
// again, is not checked, as ResealSecrets leaves it. A server checks this
// before it writes a key file it has just made, so that a start refused
// for want of the deployment's keys leaves nothing behind.
func (db *DB) CheckSecrets(ctx context.Context) error {
	if db.Secrets == nil {
		return nil
	}
	prefix := db.Secrets.CurrentPrefix()
	for _, c := range sealedColumns {
		if c.replaceable {
			continue
		}
		if err := db.checkColumn(ctx, c, prefix); err != nil {
			return err
		}
	}
	return nil
}

// checkColumn opens every value of one column that is not sealed with the
// current key, resealBatch at a time.
func (db *DB) checkColumn(ctx context.Context, c sealedColumn, prefix string) error {
	for skip := 0; ; skip += resealBatch {
		stale, err := db.staleRows(ctx, c, prefix, skip)
		if err != nil {
			return err
		}
		for _, r := range stale {
			if _, err := db.Secrets.Open(r.purpose, r.value); err != nil {
				return fmt.Errorf("%s.%s: %w", c.table, c.column, err)
			}
		}
		if len(stale) < resealBatch {
			return nil
		}
	}
}
