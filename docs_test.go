package switchboard_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestDocsFitAScreen keeps the reference pages short enough to be read
// whole: history belongs in git, detail in the pages it is about.
func TestDocsFitAScreen(t *testing.T) {
	limits := map[string]int{
		"docs/architecture.md": 250,
		"docs/performance.md":  300,
	}
	for name, limit := range limits {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(b, []byte("\n")); got > limit {
			t.Errorf("%s has %d lines, more than %d: shorten it, history belongs in git", name, got, limit)
		}
	}
}

// TestArchitectureImports holds the package table of docs/architecture.md
// to the code: every package of the module has a row, and a row's imports
// column names exactly the module's packages that package imports (not its
// tests), as `go list` reports them. A package added, or an import added
// or dropped, fails here with the row to write.
func TestArchitectureImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not found")
	}
	f, err := os.Open("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := parsePackageTable(f)
	if err != nil {
		t.Fatal(err)
	}
	actual := moduleImports(t)

	for _, pkg := range sortedKeys(actual) {
		want := actual[pkg]
		row, ok := rows[pkg]
		if !ok {
			t.Errorf("docs/architecture.md has no row for package %s; add:\n| `%s` | (its role) | %s |", pkg, pkg, importCell(want))
			continue
		}
		if !slices.Equal(row, want) {
			t.Errorf("docs/architecture.md, package %s: imports not in the table: %s; in the table, not imported: %s; the imports cell should read:\n%s",
				pkg, importCell(missing(want, row)), importCell(missing(row, want)), importCell(want))
		}
	}
	for _, pkg := range sortedKeys(rows) {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/architecture.md has a row for %s, which is not a package of the module: remove it", pkg)
		}
	}
}

// moduleName is the module path, which the table leaves out: the root
// package is `switchboard`, the others are named by their path below it.
const moduleName = "github.com/switchboard-dev/switchboard"

// moduleImports returns, for each package of the module (by the table's
// name), the sorted table names of the module's packages it imports.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		ours := []string{}
		for _, imp := range p.Imports {
			if imp == moduleName || strings.HasPrefix(imp, moduleName+"/") {
				ours = append(ours, tableName(imp))
			}
		}
		sort.Strings(ours)
		got[tableName(p.ImportPath)] = ours
	}
	return got
}

// tableName is the name the table gives the package with import path p.
func tableName(p string) string {
	if p == moduleName {
		return "switchboard"
	}
	return strings.TrimPrefix(p, moduleName+"/")
}

// importCell renders imports as the table writes them.
func importCell(imports []string) string {
	if len(imports) == 0 {
		return "none"
	}
	quoted := make([]string, 0, len(imports))
	for _, p := range imports {
		if p == "switchboard" { // the root first, as the table writes it
			quoted = append([]string{"`switchboard`"}, quoted...)
		} else {
			quoted = append(quoted, "`"+p+"`")
		}
	}
	return strings.Join(quoted, ", ")
}

var backticked = regexp.MustCompile("`([^`]+)`")

// parsePackageTable reads the table under the "## Packages" heading: a row
// is `| `name` | role | imports |`, the imports backticked names or "none".
func parsePackageTable(r io.Reader) (map[string][]string, error) {
	rows := map[string][]string{}
	sc := bufio.NewScanner(r)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			return nil, fmt.Errorf("package table row has %d cells, want 3 (package, role, imports): %s", len(cells), line)
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		imports := []string{}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			imports = append(imports, m[1])
		}
		if len(imports) == 0 && strings.TrimSpace(cells[2]) != "none" {
			return nil, fmt.Errorf("package %s: imports cell %q is neither backticked names nor none", name, cells[2])
		}
		sort.Strings(imports)
		if _, dup := rows[name]; dup {
			return nil, fmt.Errorf("package %s has two rows", name)
		}
		rows[name] = imports
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no package table under \"## Packages\"")
	}
	return rows, nil
}

// missing returns the elements of a that b lacks.
func missing(a, b []string) []string {
	var out []string
	for _, p := range a {
		if !slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
