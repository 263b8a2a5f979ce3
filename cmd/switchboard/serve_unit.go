package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/atomicfile"
)

// serve --print-unit and --install write a hardened systemd unit that runs
// the server as a dedicated user (DynamicUser) with its data in
// StateDirectory, and secrets in an environment file, never on the
// command line.

// Where --install writes the server's unit and environment file (under
// systemRoot, which tests move).
const (
	serveUnitName = "switchboard.service"
	serveEnvFile  = "etc/switchboard/serve.env"
	serveDataDir  = "/var/lib/switchboard" // what StateDirectory=switchboard makes
)

// secretServeFlags are the flags whose values are secrets: they go in the
// environment file, as their variables.
var secretServeFlags = map[string]string{
	"--owner-token": "SWITCHBOARD_OWNER_TOKEN",
	"--secret-key":  "SWITCHBOARD_SECRET_KEY",
	"--database":    "SWITCHBOARD_DATABASE",
}

// serveUnitArgs returns the serve flags of args (the command line, from
// "serve" on) for the unit's ExecStart: without --print-unit, --install
// and --data (the unit's data is its StateDirectory). A secret on the
// command line is refused: it would be readable in the unit.
func serveUnitArgs(args []string) ([]string, error) {
	i := 0
	for i < len(args) && args[i] != "serve" {
		if name, _, _ := strings.Cut(args[i], "="); secretServeFlags[name] != "" {
			return nil, secretFlagError(name)
		}
		i++
	}
	var out []string
	for i++; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "--print-unit" || a == "--install":
		case secretServeFlags[name] != "":
			return nil, secretFlagError(name)
		case name == "--data":
			if !hasValue {
				i++
			}
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

func secretFlagError(flag string) error {
	return fmt.Errorf("%s is a secret: put %s=... in /%s (mode 0600), which the unit reads, not on its command line", flag, secretServeFlags[flag], serveEnvFile)
}

// serveUnitText returns the unit that runs exe serve with args.
func serveUnitText(exe string, args []string) string {
	cmd := []string{systemdArg(exe), "--data", serveDataDir, "serve"}
	for _, a := range args {
		cmd = append(cmd, systemdArg(a))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by switchboard serve --print-unit. Secrets (SWITCHBOARD_OWNER_TOKEN,\n")
	fmt.Fprintf(&b, "# SWITCHBOARD_DATABASE, SWITCHBOARD_SECRET_KEY) go in /%s, mode 0600.\n", serveEnvFile)
	fmt.Fprintf(&b, "[Unit]\nDescription=Switchboard server\nDocumentation=https://github.com/switchboard-dev/switchboard/blob/main/docs/deploying.md\n")
	fmt.Fprintf(&b, "After=network-online.target\nWants=network-online.target\n\n")
	fmt.Fprintf(&b, "[Service]\nType=simple\nExecStart=%s\nEnvironmentFile=-/%s\n", strings.Join(cmd, " "), serveEnvFile)
	b.WriteString(`Restart=on-failure
RestartSec=2
# A user of its own, created when it starts; its data in /var/lib/switchboard.
DynamicUser=yes
StateDirectory=switchboard
StateDirectoryMode=0700
UMask=0077
LimitNOFILE=1048576
# What it may touch: its state directory and the network, nothing else.
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
MemoryDenyWriteExecute=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged @resources
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE

[Install]
WantedBy=multi-user.target
`)
	return b.String()
}

// writeServeUnit prints the unit, or with install writes it under
// systemRoot (and an empty environment file, mode 0600, when there is
// none) and says how to start it.
func writeServeUnit(out io.Writer, args []string, install bool) error {
	unitArgs, err := serveUnitArgs(args)
	if err != nil {
		return err
	}
	exe, err := executable()
	if err != nil {
		return err
	}
	unit := serveUnitText(exe, unitArgs)
	if !install {
		_, err := io.WriteString(out, unit)
		return err
	}
	unitPath := filepath.Join(systemRoot, "etc", "systemd", "system", serveUnitName)
	envPath := filepath.Join(systemRoot, serveEnvFile)
	if _, err := os.Stat(envPath); errors.Is(err, os.ErrNotExist) {
		if err := atomicfile.Write(envPath, []byte("# Secrets of switchboard.service, as NAME=value lines. Keep this file mode 0600.\n"), 0o600, 0o700); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(unitPath, []byte(unit), 0o644, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote the unit %s\nsecrets go in %s (mode 0600)\n\n", unitPath, envPath)
	fmt.Fprintf(out, "start it now and at every boot:\n\n  systemctl daemon-reload && systemctl enable --now %s\n\n", serveUnitName)
	fmt.Fprintf(out, "the operator's owner token is then in %s/owner-token:\n\n  sudo cat %s/owner-token\n", serveDataDir, serveDataDir)
	return nil
}
