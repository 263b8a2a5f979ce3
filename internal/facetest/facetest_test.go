package facetest_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyTestsImportFacetest: no package of the module imports facetest
// outside its tests (go list's Imports leaves test files out).
func TestOnlyTestsImportFacetest(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	const self = "github.com/switchboard-dev/switchboard/internal/facetest"
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "github.com/switchboard-dev/switchboard/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, imp := range p.Imports {
			if imp == self {
				t.Errorf("%s imports %s outside its tests", p.ImportPath, self)
			}
		}
	}
}
