package archtest

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// CI runs every test under the race detector, which changes allocation
// counts, so allocation tests skip under it. `make test` runs them again
// without it (the Makefile's noraces target: go test -run 'Allocs$'), which
// finds them by name. This test keeps the two in step: a test that can skip
// under the race detector must be named Test...Allocs, or it would never run.
var allocsTestName = regexp.MustCompile(`Allocs$`)

func TestRaceSkippedTestsRunWithoutRace(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, name := range raceSkippers(f) {
			found = append(found, name)
			if !allocsTestName.MatchString(name) {
				t.Errorf("%s: %s depends on the race detector but is not named Test...Allocs, so `make noraces` never runs it", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// internal/record's TestIterateAllocs is one: finding none means the
	// scan is broken.
	if !slices.Contains(found, "TestIterateAllocs") {
		t.Fatalf("found %v, not TestIterateAllocs: is the scan broken?", found)
	}
}

// raceSkippers lists the tests of a file that depend on the race
// detector: every test of a file built only with or without it, and every
// test that reads a race-detector flag (raceEnabled, as internal/record
// declares it, or race.Enabled).
func raceSkippers(f *ast.File) []string {
	tagged := false
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if expr, err := constraint.Parse(c.Text); err == nil && mentionsRace(expr) {
				tagged = true
			}
		}
	}
	var out []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
			continue
		}
		if tagged || readsRaceFlag(fn.Body) {
			out = append(out, fn.Name.Name)
		}
	}
	return out
}

func mentionsRace(expr constraint.Expr) bool {
	switch e := expr.(type) {
	case *constraint.TagExpr:
		return e.Tag == "race"
	case *constraint.NotExpr:
		return mentionsRace(e.X)
	case *constraint.AndExpr:
		return mentionsRace(e.X) || mentionsRace(e.Y)
	case *constraint.OrExpr:
		return mentionsRace(e.X) || mentionsRace(e.Y)
	}
	return false
}

func readsRaceFlag(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || n.Name == "raceEnabled"
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "race" && n.Sel.Name == "Enabled" {
				found = true
			}
		}
		return !found
	})
	return found
}

func TestRaceSkippers(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"package p\nfunc TestA(t *testing.T) { if raceEnabled { t.Skip() } }\nfunc TestB(t *testing.T) {}", []string{"TestA"}},
		{"package p\nfunc TestA(t *testing.T) { if race.Enabled { t.Skip() } }", []string{"TestA"}},
		{"//go:build !race\n\npackage p\nfunc TestA(t *testing.T) {}\nfunc helper() {}", []string{"TestA"}},
		{"//go:build race && linux\n\npackage p\nfunc TestA(t *testing.T) {}", []string{"TestA"}},
		{"//go:build linux\n\npackage p\nfunc TestA(t *testing.T) {}", nil},
		{"package p\n// raceEnabled in a comment\nfunc TestA(t *testing.T) { raceTopic := 1; _ = raceTopic }", nil},
	}
	for _, c := range cases {
		f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", c.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := raceSkippers(f); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %v, want %v", c.src, got, c.want)
		}
	}
}
