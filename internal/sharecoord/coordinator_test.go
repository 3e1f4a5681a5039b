package sharecoord

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/coordlog"
	"github.com/samsa-io/samsa/internal/share"
)

func batch(first, last int64, st share.RecordState, count int16) share.StateBatch {
	return share.StateBatch{FirstOffset: first, LastOffset: last, DeliveryState: st, DeliveryCount: count}
}

// TestMerge: a write's batches replace the stored ones over the offsets
// they cover, whatever the overlap; offsets below the start go.
func TestMerge(t *testing.T) {
	A, K, X := share.Available, share.Acknowledged, share.Archived
	for _, tc := range []struct {
		name     string
		old, new []share.StateBatch
		start    int64
		want     []share.StateBatch
	}{
		{"into the middle", []share.StateBatch{batch(0, 10, A, 1)}, []share.StateBatch{batch(3, 5, K, 1)}, 0,
			[]share.StateBatch{batch(0, 2, A, 1), batch(3, 5, K, 1), batch(6, 10, A, 1)}},
		{"across two", []share.StateBatch{batch(0, 5, A, 1), batch(6, 10, A, 2)}, []share.StateBatch{batch(4, 8, X, 3)}, 0,
			[]share.StateBatch{batch(0, 3, A, 1), batch(4, 8, X, 3), batch(9, 10, A, 2)}},
		{"before and after", []share.StateBatch{batch(10, 20, A, 1)}, []share.StateBatch{batch(0, 3, K, 1), batch(25, 30, A, 1)}, 0,
			[]share.StateBatch{batch(0, 3, K, 1), batch(10, 20, A, 1), batch(25, 30, A, 1)}},
		{"start drops and cuts", []share.StateBatch{batch(0, 10, K, 1), batch(11, 20, A, 1)}, nil, 15,
			[]share.StateBatch{batch(15, 20, A, 1)}},
		{"neighbours alike join", []share.StateBatch{batch(0, 4, K, 1)}, []share.StateBatch{batch(5, 9, K, 1)}, 0,
			[]share.StateBatch{batch(0, 9, K, 1)}},
		{"whole replacement", []share.StateBatch{batch(0, 9, A, 1)}, []share.StateBatch{batch(0, 9, K, 2)}, 0,
			[]share.StateBatch{batch(0, 9, K, 2)}},
	} {
		if got := merge(tc.old, tc.start, tc.new); !slices.Equal(got, tc.want) {
			t.Errorf("%s: merge = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func loaded(t *testing.T, log *coordlog.MemLog, partitions int32) *Coordinator {
	t.Helper()
	c := New(Deps{Log: log, Partitions: partitions})
	for p := range partitions {
		if err := c.Load(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestWriteReadFenceReload: writes are read back, survive a reload from
// the log, and are fenced by state and leader epochs as Kafka fences them;
// a deleted key stays deleted after a reload; a partition not loaded
// answers NOT_COORDINATOR.
func TestWriteReadFenceReload(t *testing.T) {
	ctx := context.Background()
	log := coordlog.NewMemLog()
	c := loaded(t, log, 3)
	k := share.Key{Group: "g", TopicID: [16]byte{1}, Partition: 0}
	if _, found, code := c.Read(ctx, k, 0); found || code != 0 {
		t.Fatalf("read before any write: found %v code %d", found, code)
	}
	if code := c.Initialize(ctx, k, 0, 100); code != 0 {
		t.Fatalf("initialize: %d", code)
	}
	if code := c.Write(ctx, k, 0, 3, 100, []share.StateBatch{batch(100, 104, share.Acknowledged, 1), batch(105, 109, share.Available, 1)}); code != 0 {
		t.Fatalf("write: %d", code)
	}
	// A newer leader reads: the older one's writes are fenced.
	st, found, code := c.Read(ctx, k, 4)
	if !found || code != 0 || st.StartOffset != 100 || st.DeliveryComplete != 5 || len(st.Batches) != 2 {
		t.Fatalf("read: %+v found %v code %d", st, found, code)
	}
	if code := c.Write(ctx, k, 0, 3, 105, nil); code != kerr.FencedLeaderEpoch.Code {
		t.Errorf("write of a fenced leader: %d, want FENCED_LEADER_EPOCH", code)
	}
	// AlterShareGroupOffsets re-initializes with a new state epoch: the
	// leader's next write, with the old one, is fenced.
	if code := c.Initialize(ctx, k, 1, 50); code != 0 {
		t.Fatalf("re-initialize: %d", code)
	}
	if code := c.Write(ctx, k, 0, 4, 105, nil); code != kerr.FencedStateEpoch.Code {
		t.Errorf("write with an old state epoch: %d, want FENCED_STATE_EPOCH", code)
	}
	if code := c.Write(ctx, k, 1, 4, 52, []share.StateBatch{batch(52, 53, share.Archived, 5)}); code != 0 {
		t.Fatalf("write: %d", code)
	}
	gone := share.Key{Group: "g", TopicID: [16]byte{2}, Partition: 7}
	if code := c.Initialize(ctx, gone, 0, 0); code != 0 {
		t.Fatal(code)
	}
	if code := c.Delete(ctx, gone); code != 0 {
		t.Fatal(code)
	}

	// A new coordinator replays the log: the same state, the same fences.
	c2 := loaded(t, log, 3)
	st, found, _ = c2.Read(ctx, k, 4)
	want := []share.StateBatch{batch(52, 53, share.Archived, 5)}
	if !found || st.StartOffset != 52 || st.StateEpoch != 1 || !slices.Equal(st.Batches, want) {
		t.Fatalf("after reload: %+v found %v", st, found)
	}
	if code := c2.Write(ctx, k, 1, 3, 60, nil); code != kerr.FencedLeaderEpoch.Code {
		t.Errorf("after reload, write of a fenced leader: %d", code)
	}
	if _, found, _ := c2.Read(ctx, gone, 0); found {
		t.Error("a deleted key came back after reload")
	}
	c2.Unload(c2.PartitionFor(k))
	if _, _, code := c2.Read(ctx, k, 4); code != kerr.NotCoordinator.Code {
		t.Errorf("read on an unloaded partition: %d, want NOT_COORDINATOR", code)
	}
}

// TestFailedAppendChangesNothing: a write whose append fails is answered
// with the mapped error and leaves the state as it was.
func TestFailedAppendChangesNothing(t *testing.T) {
	ctx := context.Background()
	log := coordlog.NewMemLog()
	c := loaded(t, log, 1)
	k := share.Key{Group: "g", TopicID: [16]byte{1}, Partition: 0}
	if code := c.Initialize(ctx, k, 0, 10); code != 0 {
		t.Fatal(code)
	}
	log.FailAppends(kerr.NotLeaderForPartition)
	if code := c.Write(ctx, k, 0, 0, 20, nil); code != kerr.NotCoordinator.Code {
		t.Errorf("write on a lost leadership: %d, want NOT_COORDINATOR", code)
	}
	log.FailAppends(nil)
	if st, _, _ := c.Read(ctx, k, -1); st.StartOffset != 10 {
		t.Errorf("start offset %d after a failed write, want 10", st.StartOffset)
	}
}
