package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"testing"
)

// The binaries the tests run are built once per test process, into
// buildDir (made by TestMain, removed when the tests end): go build of
// this command, which several tests run as processes, and the release
// TestVersionStamped checks. When the whole package runs (no -run, not
// -short), TestMain starts both builds in the background, so that they
// overlap the tests that come before the first one that needs them.
var buildDir string

// releaseEpoch and releaseDate are the SOURCE_DATE_EPOCH the release is
// built with, and the build date it must stamp.
const releaseEpoch, releaseDate = "1796428800", "2026-12-05T00:00:00Z"

// switchboardBuild runs go build of this command, once: the binary's
// path, or the error and what go build printed.
var switchboardBuild = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "switchboard")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// buildSwitchboard returns this command built by go build (once per test
// process), as switchboard in the test's temporary directory: a test may
// put files beside it (newSkillWorld's systemctl) without touching any
// other test's.
func buildSwitchboard(t *testing.T) string {
	t.Helper()
	built, err := switchboardBuild()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "switchboard")
	if err := os.Link(built, bin); err != nil {
		must(t, copyExecutable(built, bin))
	}
	return bin
}

// copyExecutable copies the executable from to a new file to.
func copyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// release is scripts/release's build, for this machine's platform, of the
// version README.md's install lines download.
type release struct {
	version string // from README.md's install lines
	dir     string // the directory the release is written to, named version
	out     bytes.Buffer
	err     error
}

// releaseBuild runs scripts/release once (SOURCE_DATE_EPOCH=releaseEpoch)
// into buildDir/releases/VERSION, and returns what it did.
var releaseBuild = sync.OnceValue(func() *release {
	r := &release{}
	install, err := readmeInstallLines()
	if err != nil {
		r.err = err
		return r
	}
	m := regexp.MustCompile(`VERSION=(v\S+)`).FindStringSubmatch(install)
	if m == nil {
		r.err = fmt.Errorf("README.md's install lines set no VERSION:\n%s", install)
		return r
	}
	r.version = m[1]
	r.dir = filepath.Join(buildDir, "releases", r.version) // as under .../releases/download/
	root, err := filepath.Abs("../..")
	if err != nil {
		r.err = err
		return r
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "release"), "--targets", runtime.GOOS+"/"+runtime.GOARCH, "--out", r.dir, r.version)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+releaseEpoch)
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	if err := cmd.Run(); err != nil {
		r.err = fmt.Errorf("scripts/release: %w", err)
	}
	return r
})

// startBuilds makes buildDir and, when the whole package's tests run,
// starts both builds in the background. The function it returns waits
// for the builds started and removes buildDir.
func startBuilds() (func(), error) {
	dir, err := os.MkdirTemp("", "switchboard-test-build-")
	if err != nil {
		return nil, err
	}
	buildDir = dir
	var wg sync.WaitGroup
	if flagValue("test.run") == "" && flagValue("test.list") == "" && !testing.Short() {
		wg.Go(func() { _, _ = switchboardBuild() })
		if runtime.GOOS != "windows" { // scripts/release is a bash script
			wg.Go(func() { releaseBuild() })
		}
	}
	return func() {
		wg.Wait()
		os.RemoveAll(dir)
	}, nil
}

// flagValue returns the value of the command-line flag name, "" if there
// is no such flag.
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
