package sharecoord

import (
	"cmp"
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/share"
)

// State is what Read returns: the key's stored state. StartOffset -1 is a
// share-partition initialized without a start (the leader picks it with
// share.auto.offset.reset).
type State struct {
	StateEpoch, LeaderEpoch int32
	StartOffset             int64
	Batches                 []share.StateBatch
	// DeliveryComplete counts the offsets at or past StartOffset that are
	// acknowledged or archived (Kafka's DeliveryCompleteCount, for lag).
	DeliveryComplete int64
}

func stateOf(s *share.Snapshot) State {
	st := State{StateEpoch: s.StateEpoch, LeaderEpoch: s.LeaderEpoch, StartOffset: s.StartOffset,
		Batches: slices.Clone(s.Batches)}
	for _, b := range s.Batches {
		if b.DeliveryState == share.Acknowledged || b.DeliveryState == share.Archived {
			st.DeliveryComplete += b.LastOffset - b.FirstOffset + 1
		}
	}
	return st
}

// Read returns a key's state for the leader of its topic partition in
// leaderEpoch (ReadShareGroupState). A newer leader epoch than stored is
// recorded, so writes of older leaders are fenced from then on; an older
// one is FENCED_LEADER_EPOCH. found is false when the key has no state.
func (c *Coordinator) Read(ctx context.Context, k share.Key, leaderEpoch int32) (st State, found bool, code int16) {
	ks, code := c.lookup(k, false)
	if code != 0 || ks == nil {
		return State{}, false, code
	}
	defer ks.mu.Unlock()
	if leaderEpoch >= 0 && leaderEpoch < ks.snap.LeaderEpoch {
		return State{}, false, kerr.FencedLeaderEpoch.Code
	}
	if leaderEpoch > ks.snap.LeaderEpoch {
		next := ks.snap
		next.LeaderEpoch = leaderEpoch
		if code := c.persist(ctx, k, ks, next); code != 0 {
			return State{}, false, code
		}
	}
	return stateOf(&ks.snap), true, 0
}

// Summary is Read without the batches and without recording the leader
// epoch (ReadShareGroupStateSummary: DescribeShareGroupOffsets).
func (c *Coordinator) Summary(k share.Key) (st State, found bool, code int16) {
	ks, code := c.lookup(k, false)
	if code != 0 || ks == nil {
		return State{}, false, code
	}
	defer ks.mu.Unlock()
	st = stateOf(&ks.snap)
	st.Batches = nil
	return st, true, 0
}

// Write stores a share-partition leader's state (WriteShareGroupState):
// its batches replace the stored ones over the offsets they cover, and
// offsets below the new start offset are forgotten.
func (c *Coordinator) Write(ctx context.Context, k share.Key, stateEpoch, leaderEpoch int32, startOffset int64, batches []share.StateBatch) int16 {
	ks, code := c.lookup(k, true)
	if code != 0 {
		return code
	}
	defer ks.mu.Unlock()
	switch {
	case stateEpoch < ks.snap.StateEpoch:
		return kerr.FencedStateEpoch.Code
	case leaderEpoch >= 0 && leaderEpoch < ks.snap.LeaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	}
	next := ks.snap
	next.StateEpoch = stateEpoch
	next.LeaderEpoch = max(leaderEpoch, ks.snap.LeaderEpoch)
	if startOffset >= 0 {
		next.StartOffset = startOffset
	}
	next.Batches = merge(ks.snap.Batches, next.StartOffset, batches)
	return c.persist(ctx, k, ks, next)
}

// Initialize (re)starts a key's state at startOffset with stateEpoch
// (InitializeShareGroupState): its batches are dropped, and writers still
// holding an older state epoch are fenced.
func (c *Coordinator) Initialize(ctx context.Context, k share.Key, stateEpoch int32, startOffset int64) int16 {
	ks, code := c.lookup(k, true)
	if code != 0 {
		return code
	}
	defer ks.mu.Unlock()
	if stateEpoch < ks.snap.StateEpoch {
		return kerr.FencedStateEpoch.Code
	}
	next := ks.snap
	next.StateEpoch, next.StartOffset, next.Batches = stateEpoch, startOffset, nil
	return c.persist(ctx, k, ks, next)
}

// Delete forgets a key (DeleteShareGroupState), with a tombstone.
func (c *Coordinator) Delete(ctx context.Context, k share.Key) int16 {
	ks, code := c.lookup(k, false)
	if code != 0 || ks == nil {
		return code
	}
	defer ks.mu.Unlock()
	if code := c.append(ctx, k, nil, c.deps.Clock.Now()); code != 0 {
		return code
	}
	ks.gone = true
	p := c.PartitionFor(k)
	c.mu.Lock()
	if c.mu.keys[p][k] == ks {
		delete(c.mu.keys[p], k)
	}
	c.mu.Unlock()
	return 0
}

// merge lays batches over old: each offset takes the state of the last
// batch covering it; offsets below start are dropped. Both lists are
// sorted and non-overlapping within themselves.
func merge(old []share.StateBatch, start int64, batches []share.StateBatch) []share.StateBatch {
	var out []share.StateBatch
	add := func(b share.StateBatch) {
		if b.LastOffset < start {
			return
		}
		b.FirstOffset = max(b.FirstOffset, start)
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.LastOffset+1 == b.FirstOffset && last.DeliveryState == b.DeliveryState && last.DeliveryCount == b.DeliveryCount {
				last.LastOffset = b.LastOffset
				return
			}
		}
		out = append(out, b)
	}
	news := slices.Clone(batches)
	slices.SortFunc(news, func(a, b share.StateBatch) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	i := 0
	covered := int64(-1) << 62 // the new batches added cover offsets up to here
	for _, o := range old {
		// The parts of o that no new batch covers survive, in order
		// with the new batches.
		cur := max(o.FirstOffset, covered+1)
		for cur <= o.LastOffset {
			if i < len(news) && news[i].FirstOffset <= cur {
				add(news[i])
				covered = max(covered, news[i].LastOffset)
				cur = max(cur, covered+1)
				i++
				continue
			}
			end := o.LastOffset
			if i < len(news) {
				end = min(end, news[i].FirstOffset-1)
			}
			keep := o
			keep.FirstOffset, keep.LastOffset = cur, end
			add(keep)
			cur = end + 1
		}
	}
	for ; i < len(news); i++ {
		add(news[i])
	}
	return out
}
