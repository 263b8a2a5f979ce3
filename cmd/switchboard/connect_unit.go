package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/atomicfile"
)

// unitNamePattern is what --name may hold: it becomes part of a unit name
// and of a file name.
var unitNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// unitPaths are the files of an installed connector.
type unitPaths struct {
	name string // the unit's name: switchboard-connect-NAME.service
	unit string // the unit file
	env  string // the environment file holding the token
}

// systemRoot is where --system writes under: "/" but in tests.
var systemRoot = "/"

// unitPaths returns where the unit and its environment file go: a user
// unit under $XDG_CONFIG_HOME (~/.config), or with --system under /etc.
func (c *ConnectCmd) unitPaths() (unitPaths, error) {
	p := unitPaths{name: "switchboard-connect-" + c.Name + ".service"}
	envName := "connect-" + c.Name + ".env"
	if c.System {
		p.unit = filepath.Join(systemRoot, "etc", "systemd", "system", p.name)
		p.env = filepath.Join(systemRoot, "etc", "switchboard", envName)
		return p, nil
	}
	config := os.Getenv("XDG_CONFIG_HOME")
	if config == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return p, errors.New("no home directory for a user unit; use --system")
		}
		config = filepath.Join(home, ".config")
	}
	p.unit, p.env = filepath.Join(config, "systemd", "user", p.name), filepath.Join(config, "switchboard", envName)
	return p, nil
}

// writeUnit prints the unit (--print-unit) or installs it with its
// environment file (--install).
func (c *ConnectCmd) writeUnit(out io.Writer, urls []string) error {
	if !unitNamePattern.MatchString(c.Name) {
		return fmt.Errorf("--name must be 1-64 characters of A-Z a-z 0-9 _ -, got %q", c.Name)
	}
	p, err := c.unitPaths()
	if err != nil {
		return err
	}
	exe, err := executable()
	if err != nil {
		return err
	}
	unit := c.unitText(exe, urls, p)
	if !c.Install {
		_, err := io.WriteString(out, unit)
		return err
	}
	env, err := c.envText(p)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(p.env, []byte(env), 0o600, 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(p.unit, []byte(unit), 0o644, 0o755); err != nil {
		return err
	}
	c.printInstalled(out, p)
	return nil
}

// unitText returns a systemd unit that runs this connect command. The
// token is not on its command line (which any local user can read) but in
// the environment file.
func (c *ConnectCmd) unitText(exe string, urls []string, p unitPaths) string {
	args := []string{exe, "--server", strings.Join(urls, ","), "connect"}
	switch {
	case c.Exec != "":
		args = append(args, "--exec", c.Exec)
	case c.Forward != "":
		args = append(args, "--forward", c.Forward)
		if !c.PublishCard {
			args = append(args, "--no-publish-card")
		}
	}
	if c.SessionExec != "" {
		args = append(args, "--session-exec", c.SessionExec, "--session-max", strconv.Itoa(c.SessionMax))
	}
	args = append(args, "--timeout", c.Timeout.String(), "--concurrency", strconv.Itoa(c.Concurrency))
	if c.LogLevel != "info" {
		args = append(args, "--log-level", c.LogLevel)
	}
	if c.LogFormat != "text" {
		args = append(args, "--log-format", c.LogFormat)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = systemdArg(a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by switchboard connect. The agent token is in %s, not here.\n", p.env)
	fmt.Fprintf(&b, "[Unit]\nDescription=Switchboard connector (%s)\nAfter=network-online.target\nWants=network-online.target\n\n", c.Name)
	fmt.Fprintf(&b, "[Service]\nType=simple\nExecStart=%s\nEnvironmentFile=%s\nRestart=always\nRestartSec=2\n", strings.Join(quoted, " "), p.env)
	// Exit status exitTerminal: the server refused the agent for good
	// (revoked token, deleted agent); restarting would only repeat that.
	fmt.Fprintf(&b, "RestartPreventExitStatus=%d\n", exitTerminal)
	wantedBy := "default.target"
	if c.System {
		wantedBy = "multi-user.target"
		if u := unitUser(); u != "" {
			fmt.Fprintf(&b, "User=%s\n", u)
		} else {
			b.WriteString("# It runs as root: set User= to run the command as another user.\n")
		}
	}
	fmt.Fprintf(&b, "\n[Install]\nWantedBy=%s\n", wantedBy)
	return b.String()
}

// envText returns the environment file: the secrets the unit needs.
func (c *ConnectCmd) envText(p unitPaths) (string, error) {
	token := strings.TrimSpace(c.Token)
	if token == "" {
		return "", errors.New("--install needs the agent token: --token or SWITCHBOARD_AGENT_TOKEN")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Secrets of %s. Keep this file mode 0600.\n", p.name)
	for _, kv := range [][2]string{{"SWITCHBOARD_AGENT_TOKEN", token}, {"SWITCHBOARD_FORWARD_TOKEN", c.ForwardToken}} {
		if kv[1] == "" {
			continue
		}
		if strings.ContainsAny(kv[1], "\r\n") {
			return "", fmt.Errorf("%s holds a line break", kv[0])
		}
		fmt.Fprintf(&b, "%s=%s\n", kv[0], envFileValue(kv[1]))
	}
	return b.String(), nil
}

// printInstalled tells what was written and how to start it.
func (c *ConnectCmd) printInstalled(out io.Writer, p unitPaths) {
	systemctl, journalctl := "systemctl --user", "journalctl --user"
	if c.System {
		systemctl, journalctl = "systemctl", "journalctl"
	}
	fmt.Fprintf(out, "wrote the unit %s\n", p.unit)
	fmt.Fprintf(out, "wrote the agent token to %s (mode 0600)\n\n", p.env)
	fmt.Fprintf(out, "start it now and at every boot%s:\n\n  %s daemon-reload && %s enable --now %s\n\n", map[bool]string{false: " (login)", true: ""}[c.System], systemctl, systemctl, p.name)
	fmt.Fprintf(out, "follow its logs:\n\n  %s -u %s -f\n", journalctl, p.name)
	if !c.System {
		fmt.Fprintf(out, "\nto keep it running while you are logged out:\n\n  loginctl enable-linger\n")
	}
}

// systemdArg quotes one argument of ExecStart: double quotes with
// backslash escapes, "%%" for a literal % (specifiers) and "$$" for a
// literal $ (variable expansion).
func systemdArg(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

// envFileValue quotes a value of an environment file when it needs it.
func envFileValue(v string) string {
	if strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@+", r))
	}) < 0 {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// unitUser is the user a system unit runs as: the one who ran sudo, or the
// current user unless it is root.
func unitUser() string {
	if u := os.Getenv("SUDO_USER"); u != "" && u != "root" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Uid != "0" {
		return u.Username
	}
	return ""
}

// executable returns the absolute path of the running binary.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the path of this program: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Abs(exe)
}
