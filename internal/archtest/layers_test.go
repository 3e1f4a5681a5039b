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

// layer of every package under internal/. A package may import only packages
// of a lower layer, or of its own layer in L0 and L1; L2 packages never
// import each other (each declares the small interface it needs and the
// broker passes an adapter). Client-side services reach the cluster over
// TCP, so they import no broker internals, only leaves. A new package must
// be added here, which makes its place in the design a reviewed decision.
var layers = map[string]int{
	"internal/record": 0, "internal/model": 0, "internal/vfs": 0, "internal/clock": 0, "internal/task": 0, "internal/version": 0,
	"internal/storage": 1, "internal/coordlog": 1, "internal/metadata": 1, "internal/config": 1, "internal/auth": 1, "internal/quota": 1,
	"internal/controller": 2, "internal/replication": 2, "internal/group": 2, "internal/txn": 2,
	"internal/broker": 3,
	"internal/cli":    clientSide, "internal/connectrt": clientSide, "internal/schemaregistry": clientSide,
	"internal/restproxy": clientSide, "internal/mirror": clientSide, "internal/console": clientSide,
	"streams": clientSide, "connect": clientSide,
	"internal/archtest": testOnly,
}

const (
	clientSide = 10
	testOnly   = 11
)

func TestLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	imports := packageImports(t, root)
	if len(imports) < 5 {
		t.Fatalf("found only %d packages under %s: is the walk broken?", len(imports), root)
	}
	for pkg, deps := range imports {
		if strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "test/") || strings.HasPrefix(pkg, "bench/") {
			continue // binaries and tooling: the top of the tree, free to wire anything
		}
		from, ok := layerOf(pkg)
		if !ok {
			t.Errorf("package %s has no layer: add it to layers in this file (see ARCHITECTURE.md)", pkg)
			continue
		}
		for _, dep := range deps {
			to, ok := layerOf(dep)
			if ok && !allowed(from, to, pkg, dep) {
				t.Errorf("%s (layer %d) imports %s (layer %d): nothing imports upward", pkg, from, dep, to)
			}
		}
	}
}

func allowed(from, to int, pkg, dep string) bool {
	switch {
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
func layerOf(pkg string) (int, bool) {
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
	}
	for _, c := range cases {
		from, _ := layerOf(c.pkg)
		to, _ := layerOf(c.dep)
		if got := allowed(from, to, c.pkg, c.dep); got != c.want {
			t.Errorf("%s -> %s: allowed=%v, want %v", c.pkg, c.dep, got, c.want)
		}
	}
}
