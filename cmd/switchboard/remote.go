package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/netguard"
)

// remoteTimeout bounds each request to a remote agent.
const remoteTimeout = 60 * time.Second

// peerTokenEnv is the variable that holds the token for a target given as
// a URL or a handle, when no flag names one.
const peerTokenEnv = "SWITCHBOARD_PEER_TOKEN"

// targetFlags are the flags of the commands that call a remote agent: its
// token and whether it may be on a private network.
type targetFlags struct {
	Token        string `name:"token" help:"Peer token of the target. An argument is visible to other users of this machine (process list, shell history): prefer --token-env or --token-stdin, or an alias (peers add)."`
	TokenEnv     string `name:"token-env" placeholder:"VAR" help:"Read the target's peer token from this environment variable."`
	TokenStdin   bool   `name:"token-stdin" help:"Read the target's peer token from stdin."`
	AllowPrivate bool   `name:"allow-private" env:"SWITCHBOARD_ALLOW_PRIVATE" help:"Allow a target on loopback or a private network (refused by default; the server named by --server is always allowed)."`
}

// remoteTarget is an A2A agent the CLI calls.
type remoteTarget struct {
	name         string // what the user named: alias, URL or handle
	url          string // its address
	token        string
	allowPrivate bool
}

// handlePattern is a handle: one DNS label.
var handlePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// resolveTarget finds the agent name stands for: a URL, an alias of the
// client config, or the handle of an agent on the server cl talks to.
func (f *targetFlags) resolveTarget(cli *CLI, cl *client, name string) (*remoteTarget, error) {
	t := &remoteTarget{name: name, allowPrivate: f.AllowPrivate}
	var alias *peerEntry
	switch {
	case strings.Contains(name, "://"):
		u, err := url.Parse(name)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("%q is not an http(s) URL without credentials", name)
		}
		t.url = strings.TrimRight(name, "/")
	default:
		dir, err := cli.configDir()
		if err == nil {
			cfg, err := loadPeers(dir)
			if err != nil {
				return nil, err
			}
			alias = cfg.Peers[name]
		}
		switch {
		case alias != nil:
			t.url = alias.URL
			t.allowPrivate = t.allowPrivate || alias.AllowPrivate
		case handlePattern.MatchString(strings.ToLower(name)):
			t.url = cl.base + "/a/" + strings.ToLower(name)
		default:
			return nil, fmt.Errorf("%q is neither a URL, an alias (switchboard peers list) nor a handle", name)
		}
	}
	tok, err := f.token(cli, alias)
	if err != nil {
		return nil, err
	}
	t.token = tok
	return t, nil
}

// token returns the target's token: from --token-stdin, --token-env or
// --token, else the alias's, else $SWITCHBOARD_PEER_TOKEN. Empty: none.
func (f *targetFlags) token(cli *CLI, alias *peerEntry) (string, error) {
	n := 0
	for _, set := range []bool{f.TokenStdin, f.TokenEnv != "", f.Token != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", errors.New("use one of --token, --token-env and --token-stdin")
	}
	switch {
	case f.TokenStdin:
		return readSecret(cli.stdin)
	case f.TokenEnv != "":
		v := strings.TrimSpace(os.Getenv(f.TokenEnv))
		if v == "" {
			return "", fmt.Errorf("$%s is empty", f.TokenEnv)
		}
		return v, nil
	case f.Token != "":
		fmt.Fprintln(cli.errOut, "switchboard: note: a token given as an argument is visible in the process list and shell history; prefer --token-env, --token-stdin or an alias")
		return f.Token, nil
	case alias != nil:
		if alias.TokenEnv != "" && alias.token() == "" {
			return "", fmt.Errorf("the alias reads its token from $%s, which is empty", alias.TokenEnv)
		}
		return alias.token(), nil
	}
	return strings.TrimSpace(os.Getenv(peerTokenEnv)), nil
}

// httpClient returns the client for requests to the target: through the
// network guard (private and special addresses refused unless allowed; the
// Switchboard server of --server is always allowed), with the token added
// to requests to the target's own origin and to no other.
func (t *remoteTarget) httpClient(server string) *http.Client {
	allow := t.allowPrivate || sameOriginURL(t.url, server)
	hc := netguard.NewClient(netguard.Options{AllowPrivate: allow, Timeout: remoteTimeout})
	if t.token != "" {
		origin, _ := url.Parse(t.url)
		hc.Transport = &bearerTransport{token: t.token, origin: origin, base: hc.Transport}
	}
	return hc
}

// sameOriginURL reports whether two URLs share scheme, host and port.
func sameOriginURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && netguard.SameOrigin(ua, ub)
}

// remoteError explains a failed call to a remote agent.
func remoteError(t *remoteTarget, err error) error {
	msg := err.Error()
	if errors.Is(err, netguard.ErrRefused) {
		return fmt.Errorf("%s: %w (add --allow-private for an agent on loopback or a private network)", t.name, err)
	}
	if errors.Is(err, a2a.ErrUnauthenticated) || strings.Contains(msg, "401") {
		hint := "pass its peer token with --token-env or --token-stdin, or remember it with  switchboard peers add ALIAS URL --token-stdin"
		if t.token != "" {
			hint = "the token was refused (revoked, rotated or mistyped?)"
		}
		return fmt.Errorf("%s refused the call: %w (%s)", t.name, err, hint)
	}
	return fmt.Errorf("%s: %w", t.name, err)
}
