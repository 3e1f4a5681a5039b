package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The check every run relies on: an output equal to the input passes, a
// doubled, lost or changed line is reported.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in")
	if err := writeInput(input, 50, 40); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	if len(lines) != 50 || len(lines[7]) != 40 || !strings.HasPrefix(lines[7], "000000007 ") {
		t.Fatalf("input: %d lines, line 7 = %q", len(lines), lines[7])
	}
	cases := []struct {
		name, output, want string
	}{
		{"equal", strings.Join(lines, ""), ""},
		{"doubled last line", strings.Join(lines, "") + lines[49], "line 51"},
		{"doubled middle line", strings.Join(lines[:20], "") + lines[19] + strings.Join(lines[20:], ""), "line 21"},
		{"lost line", strings.Join(lines[:10], "") + strings.Join(lines[11:], ""), "line 11"},
		{"reordered", strings.Join(lines[:3], "") + lines[4] + lines[3] + strings.Join(lines[5:], ""), "line 4"},
		{"truncated", strings.Join(lines, "")[:len(data)-5], "line 50"},
	}
	for _, c := range cases {
		out := filepath.Join(dir, "out")
		if err := os.WriteFile(out, []byte(c.output), 0o644); err != nil {
			t.Fatal(err)
		}
		diff, err := sameFile(input, out)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "" && diff != "" || !strings.HasPrefix(diff, c.want) {
			t.Errorf("%s: sameFile = %q, want prefix %q", c.name, diff, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
