package tabulate

import (
	"fmt"
	"testing"
)

func TestMedianSpreadPerMillion(t *testing.T) {
	f := func(v float64) string { return fmt.Sprint(v) }
	for _, c := range []struct {
		vs     []float64
		median float64
		spread string
	}{
		{nil, 0, "-"},
		{[]float64{3}, 3, "3"},
		{[]float64{5, 1, 3}, 3, "3 [1..5]"},
		{[]float64{4, 1, 3, 2}, 2.5, "2.5 [1..4]"},
	} {
		if got := Median(c.vs); got != c.median {
			t.Errorf("Median(%v) = %v, want %v", c.vs, got, c.median)
		}
		if got := Spread(c.vs, f); got != c.spread {
			t.Errorf("Spread(%v) = %q, want %q", c.vs, got, c.spread)
		}
	}
	if got := PerMillion(2, 500000); got != 4 {
		t.Errorf("PerMillion(2, 500000) = %v, want 4", got)
	}
	if got := PerMillion(2, 0); got != 0 {
		t.Errorf("PerMillion over no records = %v", got)
	}
}
