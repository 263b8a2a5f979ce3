package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// What scripts/release stamps in with -ldflags "-X main.version=...
// -X main.commit=... -X main.date=...". Empty in a build without stamps
// (go build, go install, go run): currentBuild then asks the build info.
var (
	version string // vX.Y.Z[-suffix] or "dev"
	commit  string // the full git commit, or "unknown"
	date    string // the build time, UTC, RFC 3339
)

// unknown stands for a commit or a date that neither the stamps nor the
// build info know.
const unknown = "unknown"

// buildInfo is what a binary knows of its own build.
type buildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Modified: built from a checkout with uncommitted changes (known
	// only from the build info of an unstamped build).
	Modified bool   `json:"modified,omitempty"`
	Date     string `json:"date"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// currentBuild is this binary's build: the stamps, and where there are
// none, what runtime/debug.ReadBuildInfo knows. It is worked out once.
var currentBuild = sync.OnceValue(func() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return resolveBuild(version, commit, date, bi)
})

// resolveBuild fills in a build from the stamps v, c and d, each empty
// when not stamped, and the build info bi (nil when there is none): the
// main module's version (go install ...@vX.Y.Z, or the version the go
// command derives from the checkout's tag or commit), vcs.revision,
// vcs.time and vcs.modified (a go build in a git checkout). What neither
// knows is "dev" (the version) or "unknown".
func resolveBuild(v, c, d string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: v, Commit: c, Date: d, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi != nil {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if b.Commit == "" {
			b.Commit = settings["vcs.revision"]
			b.Modified = b.Commit != "" && settings["vcs.modified"] == "true"
		}
		if b.Date == "" {
			b.Date = settings["vcs.time"]
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = unknown
	}
	if b.Date == "" {
		b.Date = unknown
	}
	return b
}

// String is the one line switchboard version prints, e.g.
// "switchboard v1.2.3 (commit 0123456789ab, built 2026-12-05T00:00:00Z,
// go1.26.8 linux/amd64)".
func (b buildInfo) String() string {
	c := b.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if b.Modified {
		c += "+dirty"
	}
	return fmt.Sprintf("switchboard %s (commit %s, built %s, %s %s/%s)", b.Version, c, b.Date, b.Go, b.OS, b.Arch)
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the version, commit, build date and Go toolchain; with
// --json, as one JSON object.
func (VersionCmd) Run(cli *CLI) error {
	b := currentBuild()
	if cli.JSON {
		enc := json.NewEncoder(cli.out)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	_, err := fmt.Fprintln(cli.out, b)
	return err
}
