package examples_test

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/STREAMS.md from docs/streams/STREAMS.md.tmpl")

const (
	guidePath    = "../../docs/STREAMS.md"
	templatePath = "../../docs/streams/STREAMS.md.tmpl"
)

// TestGuideShowsTheExamples checks that docs/STREAMS.md is its template
// with the examples' current code, inputs and outputs in place of the
// {{func:file:Name}} (a declaration), {{rest:file:Name}} (a declaration
// and what follows it in the file), {{pipes:file:Example}} and
// {{output:file:Example}} markers, so the guide cannot drift from the code that is tested; -update
// rewrites it.
func TestGuideShowsTheExamples(t *testing.T) {
	tmpl, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := expandGuide(string(tmpl))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(guidePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not its template with the current examples: run go test ./streams/examples -run TestGuide -update", guidePath)
	}
}

var marker = regexp.MustCompile(`\{\{(func|rest|pipes|output):([a-z_.]+):([A-Za-z_]+)\}\}`)

func expandGuide(tmpl string) (string, error) {
	var firstErr error
	out := marker.ReplaceAllStringFunc(tmpl, func(m string) string {
		p := marker.FindStringSubmatch(m)
		src, err := os.ReadFile(p[2])
		if err != nil {
			firstErr = err
			return m
		}
		text, err := excerpt(string(src), p[1], p[3])
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", m, err)
		}
		return text
	})
	return out, firstErr
}

// excerpt returns a declaration with its doc comment (func), an example's
// body before its output comment (pipes), or its output (output), fenced.
func excerpt(src, kind, name string) (string, error) {
	switch kind {
	case "func", "rest":
		start := regexp.MustCompile(`(?m)^(func|type) ` + name + `[ (\[]`).FindStringIndex(src)
		if start == nil {
			return "", fmt.Errorf("no declaration of %s", name)
		}
		from := start[0]
		for from > 0 {
			prev := strings.LastIndex(src[:from-1], "\n") + 1
			if !strings.HasPrefix(src[prev:from-1], "//") {
				break
			}
			from = prev
		}
		end := strings.Index(src[start[0]:], "\n}\n")
		if kind == "rest" {
			return "```go\n" + strings.TrimRight(src[from:], "\n") + "\n```", nil
		}
		return "```go\n" + src[from:start[0]+end+2] + "\n```", nil
	case "pipes", "output":
		start := strings.Index(src, "func Example"+name+"() {\n")
		if start < 0 {
			return "", fmt.Errorf("no Example%s", name)
		}
		body := src[start+len("func Example"+name+"() {\n"):]
		body = body[:strings.Index(body, "\n}\n")]
		before, after, ok := strings.Cut(body, "\t// Output:\n")
		if !ok {
			return "", fmt.Errorf("Example%s has no output", name)
		}
		var lines []string
		if kind == "pipes" {
			for _, l := range strings.Split(strings.TrimRight(before, "\n"), "\n") {
				lines = append(lines, strings.TrimPrefix(l, "\t"))
			}
			return "```go\n" + strings.Join(lines, "\n") + "\n```", nil
		}
		for _, l := range strings.Split(after, "\n") {
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "\t//"), " "))
		}
		return "```\n" + strings.Join(lines, "\n") + "\n```", nil
	}
	return "", fmt.Errorf("unknown marker kind %q", kind)
}
