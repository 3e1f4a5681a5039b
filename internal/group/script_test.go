package group

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
// a manual clock and an in-memory log. A script is a list of cases: '#'
// comment lines, one command line, a "----" line and the expected output,
// ended by a blank line. The commands are documented on harness.run. Run
// with -update to rewrite the expected output after a deliberate change,
// and review the diff.
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
	cases, err := parseScript(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	h := newHarness(t)
	defer h.close()
	for i := range cases {
		sc := &cases[i]
		got := h.run(sc.command, sc.line)
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
		if err := os.WriteFile(file, []byte(formatScript(cases)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseScript(s string) ([]scriptCase, error) {
	var cases []scriptCase
	var cur scriptCase
	inOutput := false
	for i, line := range strings.Split(s, "\n") {
		switch {
		case inOutput && strings.TrimSpace(line) == "":
			cases = append(cases, cur)
			cur, inOutput = scriptCase{}, false
		case inOutput:
			cur.output = append(cur.output, line)
		case line == "----":
			if cur.command == "" {
				return nil, fmt.Errorf("line %d: ---- without a command", i+1)
			}
			inOutput = true
		case strings.HasPrefix(line, "#"):
			cur.comments = append(cur.comments, line)
		case strings.TrimSpace(line) == "":
		case cur.command != "":
			return nil, fmt.Errorf("line %d: second command line in one case", i+1)
		default:
			cur.command, cur.line = line, i+1
		}
	}
	if inOutput {
		cases = append(cases, cur)
	} else if cur.command != "" {
		return nil, fmt.Errorf("line %d: case has no ---- line", cur.line)
	}
	return cases, nil
}

func formatScript(cases []scriptCase) string {
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
	return b.String()
}
