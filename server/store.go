package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-dev/switchboard"
	"github.com/switchboard-dev/switchboard/internal/atomicfile"
	"github.com/switchboard-dev/switchboard/seal"
	"github.com/switchboard-dev/switchboard/sqlstore"
)

// OwnerTokenFile is the name of the file, in the data directory, that holds
// the operator's owner token generated at first start.
const OwnerTokenFile = "owner-token"

// IsPostgres reports whether a --database setting names PostgreSQL.
func IsPostgres(database string) bool {
	return strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://")
}

// OpenStore opens the store a deployment keeps its data in: PostgreSQL at
// database, or the SQLite file switchboard.db in dataDir when database is
// empty, with the sqlite options. It says where it is, for the log.
func OpenStore(ctx context.Context, dataDir, database string, maxConns int, sqlite sqlstore.SQLiteOptions) (*sqlstore.DB, string, error) {
	switch {
	case IsPostgres(database):
		db, err := sqlstore.OpenPostgres(ctx, database, sqlstore.PostgresOptions{MaxConns: maxConns})
		return db, "postgres", err
	case database != "":
		return nil, "", fmt.Errorf("--database: want a postgres:// URL (leave it empty for SQLite in the data directory), got %q", truncateFlag(database))
	}
	path := filepath.Join(dataDir, "switchboard.db")
	db, err := sqlstore.OpenSQLiteWith(ctx, path, sqlite)
	return db, path, err
}

// openStore opens the configured store with the keys that seal its
// secrets, and makes sure the operator's account exists.
func (s *Server) openStore(ctx context.Context) (*sqlstore.DB, string, error) {
	cfg := s.Config
	db, where, err := OpenStore(ctx, cfg.DataDir, cfg.Database, cfg.DatabaseMaxConns, sqlstore.SQLiteOptions{SyncFull: cfg.SQLiteSyncFull})
	if err != nil {
		return nil, "", err
	}
	if err := s.sealSecrets(ctx, db); err != nil {
		_ = db.Close()
		return nil, "", err
	}
	s.DB = db
	// Instances that start together on an empty database race to create
	// the operator; the losers find the winner's account on the next try.
	for attempt := 1; ; attempt++ {
		err := s.bootstrapOperator(ctx)
		if err == nil {
			break
		}
		if switchboard.ErrorCode(err) != switchboard.ECONFLICT || attempt == 3 {
			return db, where, err
		}
	}
	return db, where, nil
}

// sealSecrets gives the store the keys that seal its secrets (--secret-key,
// or the key file in the data directory, made at first start), and seals
// again every secret that is not sealed with the current key: those kept
// before sealing existed, and those of a key rotated out. A store holding
// secrets sealed with a key the server was not given stops the start, and
// leaves nothing behind: a key file this start would make is written only
// once the store's secrets are known to open with it (CheckSecrets).
func (s *Server) sealSecrets(ctx context.Context, db *sqlstore.DB) error {
	keys, write, err := s.secretKeys()
	if err != nil {
		return err
	}
	ring, err := seal.NewKeyring(keys...)
	if err != nil {
		return err
	}
	db.Secrets = ring
	if err := db.CheckSecrets(ctx); err != nil {
		return unknownKey(err, ring)
	}
	if write != nil {
		if err := write(); err != nil {
			return err
		}
	}
	n, err := db.ResealSecrets(ctx)
	if err != nil {
		return unknownKey(err, ring)
	}
	if n > 0 {
		s.Logger.Info("sealed stored secrets with the current key", "secrets", n, "key_id", ring.CurrentID())
	}
	return nil
}

// secretKeys returns the keys of --secret-key, or of the key file in the
// data directory. Without either it makes a new key and returns, with it,
// the function that writes it to the key file.
func (s *Server) secretKeys() (keys [][]byte, write func() error, err error) {
	if s.Config.SecretKey != "" {
		if keys, err = seal.ParseKeys(s.Config.SecretKey); err != nil {
			return nil, nil, fmt.Errorf("--secret-key: %w", err)
		}
		return keys, nil, nil
	}
	path := filepath.Join(s.Config.DataDir, seal.KeyFileName)
	kf, err := seal.ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		keys = [][]byte{seal.NewKey()}
		return keys, func() error {
			if err := seal.WriteKeyFile(path, keys); err != nil {
				return err
			}
			s.Logger.Info("created the key that seals stored secrets; back it up with the data, and give every instance the same keys",
				"file", path, "key_id", seal.KeyID(keys[0]))
			return nil
		}, nil
	} else if err != nil {
		return nil, nil, err
	}
	if kf.FixedMode != 0 {
		s.Logger.Warn("the secret key file was open to other users; made it private (0600)", "file", path, "was", kf.FixedMode.String())
	}
	return kf.Keys, nil, nil
}

// unknownKey explains a store's secret that the keys given do not open.
func unknownKey(err error, ring *seal.Keyring) error {
	var unknown *seal.UnknownKeyError
	if errors.As(err, &unknown) {
		return fmt.Errorf("the database holds secrets sealed with key %s, which this server was not given: start it with the same keys as the instance that sealed them (--secret-key / SWITCHBOARD_SECRET_KEY, or that instance's %s); this server has %v",
			unknown.ID, seal.KeyFileName, ring.IDs())
	}
	return fmt.Errorf("seal stored secrets: %w", err)
}

// bootstrapOperator makes sure the operator account exists and holds the
// right owner token. At first start it creates the account; its token is
// the preset one, or a new one written to a 0600 file in the data
// directory. At later starts a preset token replaces the operator's token
// if it differs, which is also how a lost token is recovered.
func (s *Server) bootstrapOperator(ctx context.Context) error {
	op, err := s.findOperator(ctx)
	if err != nil {
		return err
	}
	preset := strings.TrimSpace(s.Config.OwnerToken)
	if preset != "" && len(preset) < switchboard.MinPresetTokenLen {
		return fmt.Errorf("owner token: a preset token must be at least %d characters", switchboard.MinPresetTokenLen)
	}
	if op == nil {
		op = &switchboard.Account{ID: switchboard.NewID(), Name: "operator", Role: switchboard.RoleOperator}
		if err := s.DB.CreateAccount(ctx, op); err != nil {
			return fmt.Errorf("create operator account: %w", err)
		}
		s.Logger.Info("created the operator account", "account_id", op.ID)
	} else if preset == "" {
		return nil
	}

	secret, hash := preset, switchboard.HashToken(preset)
	if preset == "" {
		secret, hash = switchboard.NewToken(switchboard.TokenOwner)
	} else if tok, err := s.DB.FindTokenByHash(ctx, hash); err == nil && tok.Kind == switchboard.TokenOwner && tok.AccountID == op.ID {
		return nil // the preset token is already the operator's
	}
	if err := s.DB.CreateToken(ctx, &switchboard.Token{Hash: hash, Kind: switchboard.TokenOwner, AccountID: op.ID}, true); err != nil {
		return fmt.Errorf("set operator token: %w", err)
	}
	path := filepath.Join(s.Config.DataDir, OwnerTokenFile)
	if preset != "" {
		// A token file from an earlier start now holds a revoked token.
		if err := os.Remove(path); err == nil {
			s.Logger.Info("removed the owner token file: the preset token replaced it", "file", path)
		}
		s.Logger.Info("the operator's owner token is the preset one (SWITCHBOARD_OWNER_TOKEN / --owner-token)")
		return nil
	}
	// A new file renamed into place: a file (or a symlink) already there
	// is replaced, never written through, and the token is never readable
	// by anyone else, even for a moment.
	if err := atomicfile.Write(path, []byte(secret+"\n"), 0o600, 0o700); err != nil {
		return fmt.Errorf("write owner token file: %w", err)
	}
	s.GeneratedOwnerToken = secret
	s.Logger.Info("generated the operator's owner token; keep it secret", "file", path)
	return nil
}

func (s *Server) findOperator(ctx context.Context) (*switchboard.Account, error) {
	all, err := s.DB.FindAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	for _, a := range all {
		if a.IsOperator() {
			return a, nil
		}
	}
	return nil, nil
}
