package coordlog

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/task"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestPartitions(t *testing.T) {
	ps := Partitions{1: Active}
	ps.MarkLoading(3)
	if ps[0] != Loading || ps[1] != Active || ps[2] != Loading || len(ps) != 3 {
		t.Fatalf("after MarkLoading(3): %v", ps)
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

// LoadAll loads every partition in order, goes on past a failure, and
// closes done at the end.
func TestLoadAll(t *testing.T) {
	tasks := task.NewGroup(context.Background())
	defer tasks.Stop()
	var loaded []int32
	done := make(chan struct{})
	LoadAll(tasks, 4, func(_ context.Context, p int32) error {
		loaded = append(loaded, p)
		if p == 1 {
			return errors.New("boom")
		}
		return nil
	}, slog.New(slog.DiscardHandler), "__test", done)
	<-done
	if !slices.Equal(loaded, []int32{0, 1, 2, 3}) {
		t.Fatalf("loaded %v", loaded)
	}
}
