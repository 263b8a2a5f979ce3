package main

import (
	"bytes"
	"context"
	"debug/elf"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testwait"
)

// The image itself needs a container engine, which the test machines do
// not run; these tests check what can be checked without one: the
// Dockerfile's build command makes a static binary (the distroless static
// image has no C library), that binary serves with the image's
// environment and passes the image's health check, and compose.yaml sets
// only variables the server reads.

// dockerfileLines returns the Dockerfile's lines that start with prefix.
func dockerfileLines(t *testing.T, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) { // a continued line
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if strings.HasPrefix(l, prefix) {
			out = append(out, strings.TrimSpace(strings.TrimPrefix(l, prefix)))
		}
	}
	return out
}

// dockerfileBuild returns the Dockerfile's build step: the RUN that calls
// scripts/release.
func dockerfileBuild(t *testing.T) string {
	t.Helper()
	var build string
	for _, r := range dockerfileLines(t, "RUN ") {
		if strings.Contains(r, "scripts/release") {
			build = r
		}
	}
	if build == "" {
		t.Fatal("the Dockerfile does not build with scripts/release")
	}
	return build
}

// TestDockerfileBuildsWithTheReleaseScript: the image's binary is built by
// scripts/release, with the released binaries' flags, and by nothing
// else; so the two cannot drift apart.
func TestDockerfileBuildsWithTheReleaseScript(t *testing.T) {
	dockerfileBuild(t)
	for _, r := range dockerfileLines(t, "RUN ") {
		if strings.Contains(r, "go build") || strings.Contains(r, "go install") {
			t.Errorf("the Dockerfile builds on its own, not with scripts/release: RUN %s", r)
		}
	}
}

// TestDockerfileListensOnHighPorts: the image runs as a non-root user,
// which cannot bind a port below 1024 on every container runtime; the
// port it listens on (SWITCHBOARD_ADDR) is one it exposes, and above 1023.
func TestDockerfileListensOnHighPorts(t *testing.T) {
	var addr string
	for _, e := range dockerfileLines(t, "ENV ") {
		if m := regexp.MustCompile(`SWITCHBOARD_ADDR=(\S+)`).FindStringSubmatch(e); m != nil {
			addr = m[1]
		}
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("SWITCHBOARD_ADDR %q in the Dockerfile: %v", addr, err)
	}
	exposed := strings.Fields(strings.Join(dockerfileLines(t, "EXPOSE "), " "))
	if !slices.Contains(exposed, port) {
		t.Errorf("the server listens on port %s; the Dockerfile exposes %v", port, exposed)
	}
	for _, p := range exposed {
		if n, err := strconv.Atoi(strings.TrimSuffix(p, "/tcp")); err != nil || n < 1024 {
			t.Errorf("EXPOSE %s: a non-root server listens on ports above 1023", p)
		}
	}
}

// TestDockerfileBuildsAStaticBinaryThatServes runs the Dockerfile's build
// command, which compiles everything again (-trimpath, no cgo: two minutes
// here, more on a loaded machine), so only with
// SWITCHBOARD_TEST_DOCKERFILE=1. The binary reports the version, commit
// and date given as build arguments.
func TestDockerfileBuildsAStaticBinaryThatServes(t *testing.T) {
	if os.Getenv("SWITCHBOARD_TEST_DOCKERFILE") == "" {
		t.Skip("set SWITCHBOARD_TEST_DOCKERFILE=1 to run the Dockerfile's build (about two minutes)")
	}
	build := dockerfileBuild(t)
	dir := t.TempDir()
	build = strings.ReplaceAll(build, "/dist", filepath.Join(dir, "dist"))
	build = strings.ReplaceAll(build, "/out", filepath.Join(dir, "out"))
	bin := filepath.Join(dir, "out", "switchboard")
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = "../.."
	// The build arguments, as docker build --build-arg gives them.
	const commit = "0123456789abcdef0123456789abcdef01234567"
	cmd.Env = append(os.Environ(), "VERSION=v1.2.3-docker", "COMMIT="+commit, "SOURCE_DATE_EPOCH=1796428800")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	if text, _ := versionOf(t, bin); !strings.HasPrefix(text, "switchboard v1.2.3-docker (commit 0123456789ab, built 2026-12-05T00:00:00Z, ") {
		t.Errorf("the image's binary says %q", text)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary asks for a dynamic loader: the distroless static image has none")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary needs %v", libs)
	}
	f.Close()

	// The image's environment, with its /data and port made local.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data := filepath.Join(dir, "data")
	env := append(os.Environ(), "XDG_CONFIG_HOME="+dir)
	for _, e := range dockerfileLines(t, "ENV ") {
		for _, kv := range regexp.MustCompile(`\S+=\S+`).FindAllString(e, -1) {
			kv = strings.Replace(kv, "=/data", "="+data, 1)
			kv = strings.Replace(kv, "0.0.0.0:8080", addr, 1)
			kv = strings.Replace(kv, "127.0.0.1:8080", addr, 1)
			env = append(env, kv)
		}
	}
	serve := exec.Command(bin, "serve") // the image's ENTRYPOINT and CMD
	serve.Env = env
	var logs bytes.Buffer
	serve.Stderr = &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Kill()
		_ = serve.Wait()
	})
	// The HEALTHCHECK command passes once it serves.
	testwait.ForErr(t, "the image's health check", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		health := exec.CommandContext(ctx, bin, "health")
		health.Env = env
		out, err := health.CombinedOutput()
		if err != nil {
			return &healthError{string(out), err, logs.String()}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(data, "owner-token")); err != nil {
		t.Fatalf("the operator's token is not in the data volume: %v", err)
	}
}

type healthError struct {
	out  string
	err  error
	logs string
}

func (e *healthError) Error() string { return e.err.Error() + ": " + e.out + "\nserver: " + e.logs }

// TestComposeSetsOnlyWhatTheServerReads: every SWITCHBOARD_ variable
// compose.yaml sets is the env of one of the command line's flags.
func TestComposeSetsOnlyWhatTheServerReads(t *testing.T) {
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		code, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`env:"(SWITCHBOARD_[A-Z_]+)"`).FindAllStringSubmatch(string(code), -1) {
			read[m[1]] = true
		}
	}
	vars := regexp.MustCompile(`(?m)^\s+(SWITCHBOARD_[A-Z_]+):`).FindAllStringSubmatch(string(b), -1)
	if len(vars) == 0 || len(read) == 0 {
		t.Fatalf("compose.yaml sets %d SWITCHBOARD_ variables; the flags read %d", len(vars), len(read))
	}
	for _, v := range vars {
		if !read[v[1]] {
			t.Errorf("compose.yaml sets %s, which no flag of switchboard reads", v[1])
		}
	}
}
