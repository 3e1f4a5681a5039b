package main

import (
	"slices"
	"testing"
)

func TestRoundOrder(t *testing.T) {
	bs := []string{"a", "b", "c"}
	for r, want := range map[int][]string{
		1: {"a", "b", "c"}, 2: {"b", "c", "a"}, 3: {"c", "a", "b"}, 4: {"a", "b", "c"}, 5: {"b", "c", "a"},
	} {
		if got := roundOrder(bs, r); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", r, got, want)
		}
	}
	if !slices.Equal(bs, []string{"a", "b", "c"}) {
		t.Errorf("roundOrder changed its argument: %v", bs)
	}
}
