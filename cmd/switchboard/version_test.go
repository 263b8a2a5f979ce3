package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// TestResolveBuild: stamps win; without them the build info's module
// version (go install ...@vX.Y.Z), vcs.revision, vcs.modified and
// vcs.time fill in; what nothing knows is dev and unknown.
func TestResolveBuild(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/switchboard-dev/switchboard", Version: "v0.0.0-20261205000000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-05T00:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for name, c := range map[string]struct {
		v, c, d string
		bi      *debug.BuildInfo
		want    buildInfo
	}{
		"stamped": {"v1.2.3", "fedcba9876543210fedcba9876543210fedcba98", "2026-01-02T03:04:05Z", vcs,
			buildInfo{Version: "v1.2.3", Commit: "fedcba9876543210fedcba9876543210fedcba98", Date: "2026-01-02T03:04:05Z"}},
		"go install @version": {"", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			buildInfo{Version: "v1.2.3", Commit: "unknown", Date: "unknown"}},
		"go build in a git checkout": {"", "", "", vcs,
			buildInfo{Version: "v0.0.0-20261205000000-0123456789ab+dirty", Commit: "0123456789abcdef0123456789abcdef01234567", Modified: true, Date: "2026-12-05T00:00:00Z"}},
		"go build without vcs": {"", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			buildInfo{Version: "dev", Commit: "unknown", Date: "unknown"}},
		"no build info": {"", "", "", nil, buildInfo{Version: "dev", Commit: "unknown", Date: "unknown"}},
	} {
		t.Run(name, func(t *testing.T) {
			c.want.Go, c.want.OS, c.want.Arch = runtime.Version(), runtime.GOOS, runtime.GOARCH
			if got := resolveBuild(c.v, c.c, c.d, c.bi); got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
	b := resolveBuild("", "", "", vcs)
	want := "switchboard v0.0.0-20261205000000-0123456789ab+dirty (commit 0123456789ab+dirty, built 2026-12-05T00:00:00Z, " +
		runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// versionOf runs bin version, and bin --json version, and returns both.
func versionOf(t *testing.T, bin string) (string, buildInfo) {
	t.Helper()
	text, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("switchboard version: %v\n%s", err, text)
	}
	out, err := exec.Command(bin, "--json", "version").Output()
	if err != nil {
		t.Fatalf("switchboard --json version: %v\n%s", err, out)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("switchboard --json version: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(text)), b
}

// TestVersionStamped builds a release for this machine's platform with
// scripts/release (SOURCE_DATE_EPOCH set): SHA256SUMS verifies, the
// binary prints the version, commit and date the script stamped (the same
// stamps as --print-ldflags), a server it runs reports that version in
// /healthz and switchboard_build_info, and README.md's install lines,
// pointed at the release's directory instead of GitHub, install it.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release with scripts/release")
	}
	if runtime.GOOS == "windows" {
		t.Skip("scripts/release is a bash script")
	}
	root, err := filepath.Abs("../..")
	must(t, err)
	install := readmeInstallBlock(t)
	wantCommit := "unknown"
	if head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		wantCommit = strings.TrimSpace(string(head))
	}
	r := releaseBuild() // started by TestMain when the whole package runs
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out.Bytes())
	}
	version, dist, wantDate := r.version, r.dir, releaseDate
	releases := filepath.Dir(dist)
	script := filepath.Join(root, "scripts", "release")
	name := "switchboard_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	must(t, err)
	if lines := strings.Split(strings.TrimSpace(string(sums)), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], "  "+name) {
		t.Errorf("SHA256SUMS: want one line for %s:\n%s", name, sums)
	}
	printLdflags := exec.Command(script, "--print-ldflags", version)
	printLdflags.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+releaseEpoch)
	ldflags, err := printLdflags.Output()
	must(t, err)
	if want := "-s -w -X main.version=" + version + " -X main.commit=" + wantCommit + " -X main.date=" + wantDate; strings.TrimSpace(string(ldflags)) != want {
		t.Errorf("--print-ldflags: %s, want %s", ldflags, want)
	}

	bin := filepath.Join(dist, name)
	text, b := versionOf(t, bin)
	want := buildInfo{Version: version, Commit: wantCommit, Date: wantDate, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if b != want {
		t.Errorf("--json version: got %+v\nwant %+v", b, want)
	}
	short := wantCommit[:min(12, len(wantCommit))]
	wantText := "switchboard " + version + " (commit " + short + ", built " + wantDate + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if text != wantText {
		t.Errorf("version: got  %s\nwant %s", text, wantText)
	}

	t.Run("serve", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		addr := l.Addr().String()
		must(t, l.Close())
		dir := t.TempDir()
		serve := exec.Command(bin, "--data", filepath.Join(dir, "data"), "serve", "--addr", addr, "--metrics")
		serve.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir, "SWITCHBOARD_OWNER_TOKEN=", "SWITCHBOARD_URL=")
		var logs bytes.Buffer
		serve.Stderr = &logs
		must(t, serve.Start())
		t.Cleanup(func() {
			_ = serve.Process.Kill()
			_ = serve.Wait()
		})
		testwait.ForErr(t, "the server to answer", func() error {
			resp, err := http.Get("http://" + addr + "/healthz")
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
		if _, health := getJSON(t, "http://"+addr+"/healthz"); health["version"] != version {
			t.Errorf("/healthz %v: want version %s\nserver: %s", health, version, logs.String())
		}
		wantSamples(t, scrape(t, "http://"+addr), map[string]float64{`switchboard_build_info{version="` + version + `"}`: 1})
	})

	t.Run("README install", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("the install lines need curl")
		}
		if _, err := exec.LookPath("sha256sum"); err != nil {
			t.Skip("the install lines need sha256sum")
		}
		binDir := filepath.Join(t.TempDir(), "bin")
		must(t, os.Mkdir(binDir, 0o755))
		lines := install
		for _, r := range []struct{ from, to string }{
			{"https://github.com/switchboard-dev/switchboard/releases/download", "file://" + releases},
			{"OS=linux ARCH=amd64", "OS=" + runtime.GOOS + " ARCH=" + runtime.GOARCH},
			{"sudo ", ""},
			{"/usr/local/bin/", binDir + "/"},
		} {
			if !strings.Contains(lines, r.from) {
				t.Fatalf("README.md's install lines no longer hold %q: update this test\n%s", r.from, install)
			}
			lines = strings.ReplaceAll(lines, r.from, r.to)
		}
		sh := exec.Command("bash", "-euo", "pipefail", "-c", lines)
		sh.Dir = t.TempDir()
		sh.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md's install lines: %v\n%s\n%s", err, lines, out)
		}
		if !strings.Contains(string(out), name+": OK") || !strings.Contains(string(out), wantText) {
			t.Errorf("README.md's install lines printed no %q and %q:\n%s", name+": OK", wantText, out)
		}
	})
}

// TestVersionUnstamped builds the binary as go build does, without
// stamps: switchboard version prints what the binary's build info holds
// (read here with debug/buildinfo), dev and unknown where it holds
// nothing. (Go stamps no VCS information in a git worktree, golang/go#58218,
// nor with -buildvcs=false, which .ci/run sets.)
func TestVersionUnstamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildSwitchboard(t)
	bi, err := buildinfo.ReadFile(bin)
	must(t, err)
	want := buildInfo{Version: "dev", Commit: "unknown", Date: "unknown", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		want.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			want.Commit = s.Value
		case "vcs.time":
			want.Date = s.Value
		case "vcs.modified":
			want.Modified = s.Value == "true"
		}
	}
	t.Logf("build info: version %s, commit %s, date %s", want.Version, want.Commit, want.Date)
	if _, b := versionOf(t, bin); b != want {
		t.Errorf("--json version: got %+v\nwant %+v", b, want)
	}
}
