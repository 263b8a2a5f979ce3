package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard"
)

// peersFile is the name of the client config file that keeps the remote
// agents a user sends to, by alias.
const peersFile = "peers.json"

// peerEntry is one remote agent in the client config. Its token is either
// stored in the file (mode 0600) or read from an environment variable
// named here; it is never printed in full.
type peerEntry struct {
	URL          string    `json:"url"`
	Token        string    `json:"token,omitempty"`
	TokenEnv     string    `json:"token_env,omitempty"`
	AllowPrivate bool      `json:"allow_private,omitempty"`
	AddedAt      time.Time `json:"added_at"`
}

// peerConfig is the content of peers.json.
type peerConfig struct {
	Peers map[string]*peerEntry `json:"peers"`
}

// configDir is where the client config lives: --config-dir
// ($SWITCHBOARD_CONFIG_DIR), else $XDG_CONFIG_HOME/switchboard, else
// ~/.config/switchboard.
func (cli *CLI) configDir() (string, error) {
	if cli.ConfigDir != "" {
		return cli.ConfigDir, nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "switchboard"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no config directory: set SWITCHBOARD_CONFIG_DIR or --config-dir")
	}
	return filepath.Join(home, ".config", "switchboard"), nil
}

// loadPeers reads the client config; a missing file is an empty config.
func loadPeers(dir string) (*peerConfig, error) {
	cfg := &peerConfig{Peers: map[string]*peerEntry{}}
	b, err := os.ReadFile(filepath.Join(dir, peersFile))
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	} else if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, peersFile), err)
	}
	if cfg.Peers == nil {
		cfg.Peers = map[string]*peerEntry{}
	}
	return cfg, nil
}

// save writes the client config atomically (a temporary file in the same
// directory, synced, then renamed over the old one) with mode 0600, in a
// directory of mode 0700.
func (cfg *peerConfig) save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".peers-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, peersFile))
}

// token returns the peer's token: stored, or read from its variable.
func (p *peerEntry) token() string {
	if p.TokenEnv != "" {
		return strings.TrimSpace(os.Getenv(p.TokenEnv))
	}
	return p.Token
}

// tokenStatus describes the peer's token without revealing it.
func (p *peerEntry) tokenStatus() string {
	switch {
	case p.TokenEnv != "" && p.token() != "":
		return fmt.Sprintf("from $%s (set, %s)", p.TokenEnv, fingerprint(p.token()))
	case p.TokenEnv != "":
		return fmt.Sprintf("from $%s (missing)", p.TokenEnv)
	case p.Token != "":
		return "stored (" + fingerprint(p.Token) + ")"
	}
	return "(none)"
}

// fingerprint identifies a secret without revealing it: the first 12 hex
// digits of its SHA-256.
func fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])[:12]
}

// readSecret reads a secret from r: the first line, trimmed.
func readSecret(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, 8193))
	if err != nil {
		return "", err
	}
	if len(b) > 8192 {
		return "", errors.New("the token on stdin is longer than 8192 bytes")
	}
	s, _, _ := strings.Cut(string(b), "\n")
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("no token on stdin")
	}
	return s, nil
}

// PeersCmd groups the commands that keep remote agents by alias.
type PeersCmd struct {
	Add  PeersAddCmd  `cmd:"" help:"Remember a remote agent under an alias, with its token (from stdin or an environment variable, never an argument)."`
	List PeersListCmd `cmd:"" help:"List the remembered agents; tokens are shown as a fingerprint only."`
	Rm   PeersRmCmd   `cmd:"" help:"Forget a remembered agent and its stored token."`
	// Sync, Synced and Unsync keep aliases on the server, for one agent,
	// so that its MCP tools can send to them (peers_sync.go).
	Sync   PeersSyncCmd   `cmd:"" help:"Upload aliases (all, or those named) with their tokens to the server, for one agent: its MCP tool send can then reach them."`
	Synced PeersSyncedCmd `cmd:"" help:"List the aliases synced for an agent; tokens are never shown."`
	Unsync PeersUnsyncCmd `cmd:"" help:"Remove an alias synced for an agent, and its token, from the server."`
}

// PeersAddCmd remembers a remote agent.
type PeersAddCmd struct {
	Alias        string `arg:"" help:"Alias ([A-Za-z0-9_.-], at most 64); an alias is tried before a handle of the same name."`
	URL          string `arg:"" name:"url" help:"The agent's address (its card is read from there), or the handle of an agent on the configured server (--server, or the one switchboard init saved)."`
	TokenStdin   bool   `name:"token-stdin" help:"Read the agent's peer token from stdin and store it in the config file (mode 0600)."`
	TokenEnv     string `name:"token-env" placeholder:"VAR" help:"Read the token from this environment variable each time instead of storing it."`
	AllowPrivate bool   `name:"allow-private" help:"The agent is on a private network or loopback: allow sending there."`
	Replace      bool   `name:"replace" help:"Replace an alias that exists."`
}

// Run adds the peer.
func (c *PeersAddCmd) Run(cli *CLI) error {
	if !switchboard.ValidAlias(c.Alias) {
		return fmt.Errorf("alias %q: use 1 to 64 of A-Z a-z 0-9 _ . -", c.Alias)
	}
	if !strings.Contains(c.URL, "/") {
		// A handle: the address of that agent on the configured server,
		// which this CLI already talks to (so a private one is allowed).
		handle, err := switchboard.NormalizeHandle(c.URL)
		if err != nil {
			return fmt.Errorf("%q is neither an http(s) URL nor a handle: %w", c.URL, err)
		}
		c.URL, c.AllowPrivate = strings.TrimRight(cli.serverURL(), "/")+"/a/"+handle, true
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", c.URL)
	}
	if u.User != nil {
		return errors.New("the URL must not carry credentials; use --token-stdin or --token-env")
	}
	if c.TokenStdin && c.TokenEnv != "" {
		return errors.New("--token-stdin and --token-env exclude each other")
	}
	dir, err := cli.configDir()
	if err != nil {
		return err
	}
	cfg, err := loadPeers(dir)
	if err != nil {
		return err
	}
	if _, ok := cfg.Peers[c.Alias]; ok && !c.Replace {
		return fmt.Errorf("alias %q exists; add --replace to change it", c.Alias)
	}
	p := &peerEntry{URL: strings.TrimRight(c.URL, "/"), TokenEnv: c.TokenEnv, AllowPrivate: c.AllowPrivate, AddedAt: time.Now().UTC()}
	if c.TokenStdin {
		if p.Token, err = readSecret(cli.stdin); err != nil {
			return err
		}
	}
	cfg.Peers[c.Alias] = p
	if err := cfg.save(dir); err != nil {
		return err
	}
	fmt.Fprintf(cli.out, "peer %s → %s  token %s\n", c.Alias, p.URL, p.tokenStatus())
	return nil
}

// PeersListCmd lists the remembered agents.
type PeersListCmd struct{}

// Run lists the peers.
func (c *PeersListCmd) Run(cli *CLI) error {
	dir, err := cli.configDir()
	if err != nil {
		return err
	}
	cfg, err := loadPeers(dir)
	if err != nil {
		return err
	}
	aliases := make([]string, 0, len(cfg.Peers))
	for a := range cfg.Peers {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	if cli.JSON {
		type row struct {
			Alias        string `json:"alias"`
			URL          string `json:"url"`
			Token        string `json:"token"`
			AllowPrivate bool   `json:"allow_private"`
		}
		rows := []row{}
		for _, a := range aliases {
			p := cfg.Peers[a]
			rows = append(rows, row{a, p.URL, p.tokenStatus(), p.AllowPrivate})
		}
		enc := json.NewEncoder(cli.out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(aliases) == 0 {
		fmt.Fprintln(cli.out, "no peers; add one with  switchboard peers add ALIAS URL --token-stdin")
		return nil
	}
	for _, a := range aliases {
		p := cfg.Peers[a]
		extra := ""
		if p.AllowPrivate {
			extra = "  (private network allowed)"
		}
		fmt.Fprintf(cli.out, "%s  %s  token %s%s\n", a, p.URL, p.tokenStatus(), extra)
	}
	return nil
}

// PeersRmCmd forgets a remembered agent.
type PeersRmCmd struct {
	Alias string `arg:"" help:"Alias to forget."`
}

// Run removes the peer.
func (c *PeersRmCmd) Run(cli *CLI) error {
	dir, err := cli.configDir()
	if err != nil {
		return err
	}
	cfg, err := loadPeers(dir)
	if err != nil {
		return err
	}
	if _, ok := cfg.Peers[c.Alias]; !ok {
		return fmt.Errorf("no peer %q", c.Alias)
	}
	delete(cfg.Peers, c.Alias)
	if err := cfg.save(dir); err != nil {
		return err
	}
	fmt.Fprintf(cli.out, "peer %s removed\n", c.Alias)
	return nil
}
