package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard"
)

const pushColumns = `protocol, created_at, data`

// SavePushConfig implements switchboard.PushConfigStore.
func (db *DB) SavePushConfig(ctx context.Context, c *switchboard.PushConfig) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return db.savePushConfig(ctx, tx, c) })
}

func (db *DB) savePushConfig(ctx context.Context, tx *sql.Tx, c *switchboard.PushConfig) error {
	var others int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM push_configs WHERE task_id = $1 AND id <> $2`,
		string(c.Config.TaskID), c.Config.ID).Scan(&others); err != nil {
		return err
	}
	if others >= switchboard.MaxPushConfigsPerTask {
		return switchboard.Errorf(switchboard.EINVALID, "a task holds at most %d push notification configs", switchboard.MaxPushConfigsPerTask)
	}
	data, err := json.Marshal(&c.Config)
	if err != nil {
		return fmt.Errorf("encode push config: %w", err)
	}
	sealed, err := db.seal(purposePushConfig, string(data))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO push_configs (task_id, id, protocol, created_at, data) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (task_id, id) DO UPDATE SET protocol = excluded.protocol, data = excluded.data`,
		string(c.Config.TaskID), c.Config.ID, string(c.Protocol), nanos(c.CreatedAt), sealed)
	return err
}

// FindPushConfig implements switchboard.PushConfigStore.
func (db *DB) FindPushConfig(ctx context.Context, taskID a2a.TaskID, id string) (*switchboard.PushConfig, error) {
	c, err := db.scanPushConfig(db.read.QueryRowContext(ctx,
		`SELECT `+pushColumns+` FROM push_configs WHERE task_id = $1 AND id = $2`, string(taskID), id))
	if err == sql.ErrNoRows {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "push notification config not found")
	}
	return c, db.formatError(err)
}

// FindPushConfigs implements switchboard.PushConfigStore.
func (db *DB) FindPushConfigs(ctx context.Context, taskID a2a.TaskID) ([]*switchboard.PushConfig, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+pushColumns+` FROM push_configs WHERE task_id = $1 ORDER BY created_at, id`, string(taskID))
	if err != nil {
		return nil, db.formatError(err)
	}
	defer rows.Close()
	var out []*switchboard.PushConfig
	for rows.Next() {
		c, err := db.scanPushConfig(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeletePushConfig implements switchboard.PushConfigStore.
func (db *DB) DeletePushConfig(ctx context.Context, taskID a2a.TaskID, id string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM push_configs WHERE task_id = $1 AND id = $2`, string(taskID), id); err != nil {
			return err
		}
		return db.cancelPushes(ctx, tx, taskID, id)
	})
}

func (db *DB) scanPushConfig(s scanner) (*switchboard.PushConfig, error) {
	var c switchboard.PushConfig
	var proto, data string
	var created int64
	if err := s.Scan(&proto, &created, &data); err != nil {
		return nil, err
	}
	data, err := db.open(purposePushConfig, data)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(data), &c.Config); err != nil {
		return nil, fmt.Errorf("decode push config: %w", err)
	}
	c.Protocol = switchboard.ProtocolVersion(proto)
	c.CreatedAt = fromNanos(created)
	return &c, nil
}
