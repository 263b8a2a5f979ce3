package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/switchboard-dev/switchboard/seal"
)

// sealSecrets gives the store the keys that seal its secrets (--secret-key,
// or the key file in the data directory, made at first start), and seals
// again every secret that is not sealed with the current key: those kept
// before sealing existed, and those of a key rotated out. A store holding
// secrets sealed with a key the server was not given stops the start.
func (m *Main) sealSecrets(ctx context.Context, cfg Config) error {
	var keys [][]byte
	if cfg.SecretKey != "" {
		var err error
		if keys, err = seal.ParseKeys(cfg.SecretKey); err != nil {
			return fmt.Errorf("--secret-key: %w", err)
		}
	} else {
		path := filepath.Join(cfg.DataDir, seal.KeyFileName)
		kf, err := seal.LoadKeyFile(path)
		if err != nil {
			return err
		}
		if kf.Created {
			m.Logger.Info("created the key that seals stored secrets; back it up with the data, and give every instance the same keys",
				"file", path, "key_id", seal.KeyID(kf.Keys[0]))
		}
		if kf.FixedMode != 0 {
			m.Logger.Warn("the secret key file was open to other users; made it private (0600)", "file", path, "was", kf.FixedMode.String())
		}
		keys = kf.Keys
	}
	ring, err := seal.NewKeyring(keys...)
	if err != nil {
		return err
	}
	m.DB.Secrets = ring
	n, err := m.DB.ResealSecrets(ctx)
	var unknown *seal.UnknownKeyError
	if errors.As(err, &unknown) {
		return fmt.Errorf("the database holds secrets sealed with key %s, which this server was not given: start it with the same keys as the instance that sealed them (--secret-key / SWITCHBOARD_SECRET_KEY, or that instance's %s); this server has %v",
			unknown.ID, seal.KeyFileName, ring.IDs())
	} else if err != nil {
		return fmt.Errorf("seal stored secrets: %w", err)
	}
	if n > 0 {
		m.Logger.Info("sealed stored secrets with the current key", "secrets", n, "key_id", ring.CurrentID())
	}
	return nil
}

// SecretKeyCmd manages the keys that seal stored secrets.
type SecretKeyCmd struct {
	Rotate   SecretKeyRotateCmd   `cmd:"" help:"Put a new sealing key at the top of the key file in --data; the old ones stay to open what they sealed. Restart the server(s): each seals every stored secret again with the new key."`
	Generate SecretKeyGenerateCmd `cmd:"" help:"Print a new key (base64), for --secret-key / SWITCHBOARD_SECRET_KEY."`
}

// SecretKeyRotateCmd rotates the key file.
type SecretKeyRotateCmd struct{}

// Run rotates the key file in the data directory.
func (SecretKeyRotateCmd) Run(cli *CLI) error {
	path := filepath.Join(cli.Data, seal.KeyFileName)
	id, err := seal.RotateKeyFile(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(cli.out, "the new sealing key is %s (in %s)\n", id, path)
	fmt.Fprintln(cli.out, "restart the server: it seals every stored secret again with the new key. Give every instance the same file;")
	fmt.Fprintln(cli.out, "once all of them have restarted, the older keys below the first line may be removed.")
	return nil
}

// SecretKeyGenerateCmd prints a new key.
type SecretKeyGenerateCmd struct{}

// Run prints a new key and its id.
func (SecretKeyGenerateCmd) Run(cli *CLI) error {
	key := seal.NewKey()
	fmt.Fprintln(cli.out, base64.StdEncoding.EncodeToString(key))
	fmt.Fprintf(cli.errOut, "key id %s; to rotate, put it first: SWITCHBOARD_SECRET_KEY=NEW,OLD\n", seal.KeyID(key))
	return nil
}
