package switchboard_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFacesFitInMind: each HTTP face, and what they share, stays a package
// a reader holds in mind: at most 2,500 lines of code (not blank, not only
// a comment) outside its tests.
func TestFacesFitInMind(t *testing.T) {
	const most = 2500
	for _, pkg := range []string{"httpapi", "a2aedge", "a2abind", "a2arpc", "ownerhttp", "oauthhttp", "agenthttp"} {
		files, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for line := range strings.Lines(string(b)) {
				if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
					n++
				}
			}
		}
		if n > most {
			t.Errorf("%s has %d lines of code, more than %d: split it by what it serves", pkg, n, most)
		}
	}
}
