package linediff

import (
	"fmt"
	"strings"
	"testing"
)

// TestDiff: the diff keeps common lines, marks the rest - and +
// (removals first), numbers each side's lines, and rebuilds both texts.
func TestDiff(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"a b c", "a b c", " a  b  c"},
		{"a b c", "a x c", " a -b +x  c"},
		{"", "a", "+a"},
		{"a", "", "-a"},
		{"a b c d", "b d e", "-a  b -c  d +e"},
		{"x a b", "a b y", "-x  a  b +y"},
		{"a b", "c d", "-a -b +c +d"},
		{"k a k", "k b k", " k -a +b  k"},
	} {
		a, b := strings.Fields(tt.a), strings.Fields(tt.b)
		var got, old, nw []string
		for _, l := range Diff(a, b) {
			got = append(got, l.Sign()+l.Text)
			if l.Op != Added {
				old = append(old, l.Text)
				if l.Old != len(old) {
					t.Errorf("%q→%q: %q has old number %d, want %d", tt.a, tt.b, l.Text, l.Old, len(old))
				}
			}
			if l.Op != Removed {
				nw = append(nw, l.Text)
				if l.New != len(nw) {
					t.Errorf("%q→%q: %q has new number %d, want %d", tt.a, tt.b, l.Text, l.New, len(nw))
				}
			}
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("%q→%q: %q, want %q", tt.a, tt.b, g, tt.want)
		}
		if strings.Join(old, " ") != tt.a || strings.Join(nw, " ") != tt.b {
			t.Errorf("%q→%q: the diff rebuilds %q and %q", tt.a, tt.b, old, nw)
		}
	}
}

// TestDiffBound: past the table's bound the middle is all removed then
// all added, still a diff that rebuilds both texts.
func TestDiffBound(t *testing.T) {
	big := make([]string, 3000)
	other := make([]string, 3000)
	for i := range big {
		big[i], other[i] = fmt.Sprint("a", i), fmt.Sprint("b", i)
	}
	lines := Diff(big, other)
	if len(lines) != 6000 || lines[0] != (Line{Op: Removed, Text: "a0", Old: 1}) || lines[3000] != (Line{Op: Added, Text: "b0", New: 1}) {
		t.Errorf("a large diff has %d lines, starting %+v, %+v", len(lines), lines[0], lines[min(3000, len(lines)-1)])
	}
}
