package scripttest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the test scripts with the actual output")

// Case is one command of a script and what it should print.
type Case struct {
	Comments []string
	Command  string
	Input    []string
	Output   []string
	Line     int // of the command, for messages
}

// Run runs every script matching pattern (e.g. testdata/*.txt) as a subtest.
// start makes a fresh harness for a script and returns the function that
// runs one case and returns its output lines.
func Run(t *testing.T, pattern string, start func(t *testing.T) func(c *Case) []string) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) { runFile(t, file, start) })
	}
}

func runFile(t *testing.T, file string, start func(t *testing.T) func(c *Case) []string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Parse(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	run := start(t)
	for i := range cases {
		c := &cases[i]
		got := run(c)
		if *update {
			c.Output = got
			continue
		}
		if !slices.Equal(got, c.Output) {
			t.Errorf("%s:%d: %s\n got:\n%s\nwant:\n%s", file, c.Line, c.Command,
				strings.Join(got, "\n"), strings.Join(c.Output, "\n"))
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(Format(cases)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Parse reads a script.
func Parse(s string) ([]Case, error) {
	var cases []Case
	var cur Case
	inOutput := false
	for i, line := range strings.Split(s, "\n") {
		switch {
		case inOutput && strings.TrimSpace(line) == "":
			cases = append(cases, cur)
			cur, inOutput = Case{}, false
		case inOutput:
			cur.Output = append(cur.Output, line)
		case line == "----":
			if cur.Command == "" {
				return nil, fmt.Errorf("line %d: ---- without a command", i+1)
			}
			inOutput = true
		case cur.Command == "" && strings.HasPrefix(line, "#"):
			cur.Comments = append(cur.Comments, line)
		case cur.Command == "" && strings.TrimSpace(line) == "":
		case cur.Command == "":
			cur.Command, cur.Line = line, i+1
		default:
			cur.Input = append(cur.Input, line)
		}
	}
	if inOutput {
		cases = append(cases, cur)
	} else if cur.Command != "" {
		return nil, fmt.Errorf("line %d: case has no ---- line", cur.Line)
	}
	return cases, nil
}

// Format writes cases back as a script.
func Format(cases []Case) string {
	var b strings.Builder
	for i, c := range cases {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range c.Comments {
			b.WriteString(l + "\n")
		}
		b.WriteString(c.Command + "\n")
		for _, l := range c.Input {
			b.WriteString(l + "\n")
		}
		b.WriteString("----\n")
		for _, l := range c.Output {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// Args are a command's fields after its name: positional words and
// key=value options.
type Args struct {
	Pos  []string
	Opts map[string]string
}

// ParseArgs splits fields into positional words and key=value options.
func ParseArgs(fields []string) Args {
	a := Args{Opts: map[string]string{}}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			a.Opts[k] = v
		} else {
			a.Pos = append(a.Pos, f)
		}
	}
	return a
}
