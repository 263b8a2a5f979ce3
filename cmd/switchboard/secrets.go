package main

import (
	"encoding/base64"
	"fmt"
	"path/filepath"

	"github.com/switchboard-dev/switchboard/seal"
)

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
