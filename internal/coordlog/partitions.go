package coordlog

import (
	"maps"
	"slices"

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

// MarkLoading marks a partition loading ahead of its load, when this
// broker has just become its leader, so its keys answer
// COORDINATOR_LOAD_IN_PROGRESS rather than NOT_COORDINATOR. A partition
// with a state keeps it.
func (ps Partitions) MarkLoading(partition int32) {
	if _, ok := ps[partition]; !ok {
		ps[partition] = Loading
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
