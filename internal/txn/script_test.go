package txn

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the actual output")

// TestScripts runs the text scripts in testdata against a Coordinator with
// a manual clock, an in-memory log and a recording marker writer. A script
// is a list of cases: '#' comment lines, one command line, a "----" line
// and the expected output, ended by a blank line. The commands are
// documented on harness.run. -update rewrites the expected output.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) { runScript(t, file) })
	}
}

type scriptCase struct {
	comments []string
	command  string
	output   []string
	line     int
}

func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []scriptCase
	var cur scriptCase
	inOutput := false
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case inOutput && strings.TrimSpace(line) == "":
			cases, cur, inOutput = append(cases, cur), scriptCase{}, false
		case inOutput:
			cur.output = append(cur.output, line)
		case line == "----":
			inOutput = true
		case strings.HasPrefix(line, "#"):
			cur.comments = append(cur.comments, line)
		case strings.TrimSpace(line) == "":
		default:
			if cur.command != "" {
				t.Fatalf("%s:%d: second command line in one case", file, i+1)
			}
			cur.command, cur.line = line, i+1
		}
	}
	if inOutput {
		cases = append(cases, cur)
	}
	h := newHarness(t)
	defer h.close()
	for i := range cases {
		sc := &cases[i]
		got := h.run(sc.command)
		if *update {
			sc.output = got
			continue
		}
		if !slices.Equal(got, sc.output) {
			t.Errorf("%s:%d: %s\n got:\n%s\nwant:\n%s", file, sc.line, sc.command,
				strings.Join(got, "\n"), strings.Join(sc.output, "\n"))
		}
	}
	if *update {
		var b strings.Builder
		for i, c := range cases {
			if i > 0 {
				b.WriteString("\n")
			}
			for _, l := range c.comments {
				b.WriteString(l + "\n")
			}
			b.WriteString(c.command + "\n----\n")
			for _, l := range c.output {
				b.WriteString(l + "\n")
			}
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// argMap splits "k=v" words; bare words are returned in order.
func argMap(words []string) (map[string]string, []string) {
	kv := make(map[string]string)
	var bare []string
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok {
			kv[k] = v
		} else {
			bare = append(bare, w)
		}
	}
	return kv, bare
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}
