package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/atomicfile"
)

// clientFile is the name of the client config file that init writes in
// the config directory: the server, and the agent that the commands which
// act for an agent (send, inbox, outbox, status, connect) default to.
const clientFile = "client.json"

// defaultServer is the server of the commands when neither --server,
// $SWITCHBOARD_URL nor the client config names one.
const defaultServer = "http://127.0.0.1:8080"

// clientConfig is the content of client.json.
type clientConfig struct {
	Server string `json:"server,omitempty"`
	Agent  string `json:"agent,omitempty"`
	// AgentTokenFile holds the agent's token (mode 0600), for connect and
	// for sending on the network; empty for an inbox agent.
	AgentTokenFile string `json:"agent_token_file,omitempty"`
}

// loadClientConfig reads client.json; a missing file is an empty config.
func loadClientConfig(dir string) (*clientConfig, error) {
	cfg := &clientConfig{}
	b, err := os.ReadFile(filepath.Join(dir, clientFile))
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	} else if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, clientFile), err)
	}
	return cfg, nil
}

// save writes client.json (mode 0600).
func (cfg *clientConfig) save(dir string) error {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, clientFile), append(b, '\n'), 0o600, 0o700)
}

// clientConfig returns the client config, or an empty one when there is
// no config directory or file (a command then works as without init).
func (cli *CLI) clientConfig() *clientConfig {
	dir, err := cli.configDir()
	if err != nil {
		return &clientConfig{}
	}
	cfg, err := loadClientConfig(dir)
	if err != nil {
		fmt.Fprintf(cli.errOut, "switchboard: %v (ignored)\n", err)
		return &clientConfig{}
	}
	return cfg
}

// serverURL returns the server the commands talk to: --server or
// $SWITCHBOARD_URL, else the one init saved, else defaultServer.
func (cli *CLI) serverURL() string {
	if s := strings.TrimSpace(cli.Server); s != "" {
		return s
	}
	if s := cli.clientConfig().Server; s != "" {
		return s
	}
	return defaultServer
}

// defaultAgent returns the agent init configured, or "".
func (cli *CLI) defaultAgent() string {
	return cli.clientConfig().Agent
}

// savedAgentToken returns the agent token that init saved for the
// configured agent, or "".
func (cli *CLI) savedAgentToken() string {
	cfg := cli.clientConfig()
	if cfg.AgentTokenFile == "" {
		return ""
	}
	b, err := os.ReadFile(cfg.AgentTokenFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
