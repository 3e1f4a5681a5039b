package coordlog

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/task"
	"github.com/twmb/franz-go/pkg/kerr"
)

// PartitionState is how far a coordinator has loaded one partition of its
// internal topic.
type PartitionState int8

const (
	Loading PartitionState = iota // replaying: its keys answer COORDINATOR_LOAD_IN_PROGRESS
	Active                        // loaded and served
	Failed                        // the replay failed: COORDINATOR_NOT_AVAILABLE until a load succeeds
)

// Partitions is the set of internal-topic partitions a coordinator serves,
// with their load state. It is not safe for concurrent use: the coordinator
// guards it with the lock of the state it loads.
type Partitions map[int32]PartitionState

// MarkLoading marks partitions 0..n-1 loading, leaving those with a state.
func (ps Partitions) MarkLoading(n int32) {
	for p := range n {
		if _, ok := ps[p]; !ok {
			ps[p] = Loading
		}
	}
}

// List returns the partitions, in no order.
func (ps Partitions) List() []int32 { return slices.Collect(maps.Keys(ps)) }

// Code is the error a request for a key of partition gets from its state:
// NOT_COORDINATOR when the partition is not served, 0 when it is active.
func (ps Partitions) Code(partition int32) int16 {
	st, ok := ps[partition]
	switch {
	case !ok:
		return kerr.NotCoordinator.Code
	case st == Loading:
		return kerr.CoordinatorLoadInProgress.Code
	case st == Failed:
		return kerr.CoordinatorNotAvailable.Code
	}
	return 0
}

// AnyLoading reports whether some partition is still loading.
func (ps Partitions) AnyLoading() bool {
	for _, st := range ps {
		if st == Loading {
			return true
		}
	}
	return false
}

// LoadAll loads partitions 0..n-1 of topic one after another on tasks,
// logging the failures, and closes done when it is over: the background
// load a coordinator's Start begins.
func LoadAll(tasks *task.Group, n int32, load func(context.Context, int32) error, log *slog.Logger, topic string, done chan<- struct{}) {
	tasks.Go(func(ctx context.Context) {
		defer close(done)
		start := time.Now()
		failed := 0
		for p := range n {
			if err := load(ctx, p); err != nil {
				failed++
				log.Error("loading "+topic+" partition failed", "partition", p, "err", err)
			}
		}
		if ctx.Err() == nil {
			log.Info("loaded "+topic, "partitions", n, "failed", failed, "took", time.Since(start).Round(time.Millisecond))
		}
	})
}
