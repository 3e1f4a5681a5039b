package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/samsa-io/samsa/"

// The layer of every package is docs/ARCHITECTURE.md's package table: the
// map the tests check against is read from it, so the document and the
// rules cannot disagree. A package may import only packages of a lower
// layer, or of its own layer in L0 and L1; L2 packages never import each
// other (each declares the small interface it needs and the broker passes
// an adapter). Client-side services reach the cluster over TCP, so they
// import no broker internals, only leaves. A new package must be added to
// the table, which makes its place in the design a reviewed decision.
const (
	clientSide = 10
	testOnly   = 11
	top        = 12 // binaries and tooling: free to wire anything
)

var layerNames = map[string]int{"L0": 0, "L1": 1, "L2": 2, "L3": 3, "client": clientSide, "test": testOnly, "top": top}

// row is one line of the architecture table.
type row struct {
	layer int
	built bool
}

var architecture = filepath.Join("..", "..", "docs", "ARCHITECTURE.md")

// readArchitecture parses the package table of docs/ARCHITECTURE.md:
// | `package` | layer | state | owns |.
func readArchitecture(t *testing.T) map[string]row {
	t.Helper()
	data, err := os.ReadFile(architecture)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]row{}
	for i, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		layer, ok := layerNames[strings.TrimSpace(cells[2])]
		state := strings.TrimSpace(cells[3])
		if !ok || !(state == "built" || strings.HasPrefix(state, "planned")) {
			continue // another table of the page
		}
		if _, dup := rows[name]; dup {
			t.Fatalf("%s:%d: %s listed twice", architecture, i+1, name)
		}
		rows[name] = row{layer: layer, built: state == "built"}
	}
	if len(rows) < 10 {
		t.Fatalf("%s: found only %d package rows: has the table's shape changed?", architecture, len(rows))
	}
	return rows
}

func layersOf(rows map[string]row) map[string]int {
	out := make(map[string]int, len(rows))
	for name, r := range rows {
		out[name] = r.layer
	}
	return out
}

// TestArchitectureTableMatchesTree: every package in the tree has a row,
// every row marked built is a package, and no planned package exists yet
// under its row.
func TestArchitectureTableMatchesTree(t *testing.T) {
	rows := readArchitecture(t)
	imports := packageImports(t, filepath.Join("..", ".."))
	for pkg := range imports {
		r, ok := rows[pkg]
		switch {
		case !ok:
			t.Errorf("package %s is not in %s's table: add a row with its layer", pkg, architecture)
		case !r.built:
			t.Errorf("package %s exists but %s calls it planned: mark it built", pkg, architecture)
		}
	}
	for name, r := range rows {
		if _, ok := imports[name]; r.built && !ok {
			t.Errorf("%s lists %s as built, but there is no such package", architecture, name)
		}
	}
}

func TestLayers(t *testing.T) {
	layers := layersOf(readArchitecture(t))
	root := filepath.Join("..", "..")
	imports := packageImports(t, root)
	if len(imports) < 5 {
		t.Fatalf("found only %d packages under %s: is the walk broken?", len(imports), root)
	}
	for pkg, deps := range imports {
		from, ok := layerOf(layers, pkg)
		if ok && from == top {
			continue // binaries and tooling: the top of the tree, free to wire anything
		}
		if !ok {
			t.Errorf("package %s has no layer: add a row to %s", pkg, architecture)
			continue
		}
		for _, dep := range deps {
			to, ok := layerOf(layers, dep)
			if ok && !allowed(from, to, pkg, dep) {
				t.Errorf("%s (layer %d) imports %s (layer %d): nothing imports upward", pkg, from, dep, to)
			}
		}
	}
}

func allowed(from, to int, pkg, dep string) bool {
	switch {
	case to == top:
		return false
	case from == testOnly:
		return true
	case from == clientSide:
		return to == 0 || to == clientSide
	case to >= clientSide:
		return false
	case from == to:
		return from < 2 || topPackage(pkg) == topPackage(dep)
	}
	return to < from
}

// layerOf finds the layer of a package or of the package it is nested in.
func layerOf(layers map[string]int, pkg string) (int, bool) {
	for p := pkg; p != "." && p != ""; p = filepath.Dir(p) {
		if l, ok := layers[p]; ok {
			return l, true
		}
	}
	return 0, false
}

func topPackage(pkg string) string {
	parts := strings.SplitN(pkg, "/", 3)
	if len(parts) < 2 {
		return pkg
	}
	return parts[0] + "/" + parts[1]
}

// packageImports maps each package directory (relative to the module root)
// to the module-internal packages its non-test files import.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if dep, ok := strings.CutPrefix(p, module); ok {
				out[rel] = append(out[rel], dep)
			}
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func TestAllowedRules(t *testing.T) {
	layers := layersOf(readArchitecture(t))
	cases := []struct {
		pkg, dep string
		want     bool
	}{
		{"internal/storage", "internal/record", true},
		{"internal/record", "internal/storage", false},
		{"internal/storage", "internal/config", true},
		{"internal/group", "internal/txn", false},
		{"internal/group", "internal/group/assign", true},
		{"internal/broker", "internal/group", true},
		{"internal/group", "internal/broker", false},
		{"internal/cli", "internal/storage", false},
		{"internal/cli", "internal/model", true},
		{"internal/storage", "internal/cli", false},
		{"streams", "internal/broker", false},
		{"pkg/serde", "internal/schemaregistry/schema", true},
		{"pkg/serde", "internal/broker", false},
		{"internal/cli", "pkg/serde", true},
	}
	for _, c := range cases {
		from, _ := layerOf(layers, c.pkg)
		to, _ := layerOf(layers, c.dep)
		if got := allowed(from, to, c.pkg, c.dep); got != c.want {
			t.Errorf("%s -> %s: allowed=%v, want %v", c.pkg, c.dep, got, c.want)
		}
	}
}
