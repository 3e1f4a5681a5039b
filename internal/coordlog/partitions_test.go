package coordlog

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestPartitions(t *testing.T) {
	ps := Partitions{1: Active}
	for p := range int32(3) {
		ps.MarkLoading(p)
	}
	if ps[0] != Loading || ps[1] != Active || ps[2] != Loading || len(ps) != 3 {
		t.Fatalf("after MarkLoading(0..2): %v", ps)
	}
	if !ps.AnyLoading() {
		t.Error("AnyLoading false with loading partitions")
	}
	ps[0], ps[2] = Active, Failed
	if ps.AnyLoading() {
		t.Error("AnyLoading true with none loading")
	}
	ps[3] = Loading
	for p, want := range map[int32]int16{1: 0, 2: kerr.CoordinatorNotAvailable.Code, 3: kerr.CoordinatorLoadInProgress.Code, 9: kerr.NotCoordinator.Code} {
		if got := ps.Code(p); got != want {
			t.Errorf("Code(%d) = %d, want %d", p, got, want)
		}
	}
	got := ps.List()
	slices.Sort(got)
	if !slices.Equal(got, []int32{0, 1, 2, 3}) {
		t.Errorf("List() = %v", got)
	}
}
