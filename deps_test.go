package switchboard_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDeps keeps the root package the vocabulary of the system: it may
// import the standard library and the A2A wire types, nothing else (no
// adapter, no driver), and it runs nothing: no goroutine, no lock, no
// logging, no network (a service belongs in a package of its own). And the
// shipped binary must not link the testing package.
func TestDeps(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"github.com/a2aproject/a2a-go/v2/a2a": true}
	// What a service would need and a vocabulary does not.
	running := map[string]bool{"sync": true, "sync/atomic": true, "log": true, "log/slog": true, "net": true, "net/http": true, "database/sql": true, "os": true}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && !allowed[p] {
				t.Errorf("%s imports %s: the root package may only use the standard library and A2A types", name, p)
			}
			if running[p] {
				t.Errorf("%s imports %s: the root package holds types and interfaces, not services", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: a goroutine at %s: background work belongs in a service package", name, fset.Position(g.Pos()))
			}
			return true
		})
	}

	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command("go", "list", "-deps", "./cmd/switchboard").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "testing" || strings.HasPrefix(dep, "testing/") {
			t.Errorf("the binary links %s", dep)
		}
	}
}
