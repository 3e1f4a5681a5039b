package mm2

import (
	"fmt"
	"reflect"
	"testing"
)

// TestSyncWriterRule walks MirrorSourceTaskTest.testOffsetSync's records
// through Record with offset.lag.max 50; every step names which of
// PartitionState's conditions fires. Unlike that test, the flag is always
// reset after a sync, as OffsetSyncWriter.maybeQueueOffsetSyncs does.
func TestSyncWriterRule(t *testing.T) {
	steps := []struct {
		up, down int64
		now      bool
		why      string
	}{
		{0, 100, true, "first record of the partition"},
		{2, 102, true, "upstream skipped 1"},
		{3, 152, false, "152-(102+1) = 49 < 50"},
		{4, 153, true, "153-(102+1) = 50: too stale"},
		{5, 154, false, "in step"},
		{6, 203, false, "203-(153+1) = 49"},
		{7, 204, true, "204-(153+1) = 50"},
		{2, 206, true, "upstream went back"},
		{3, 207, false, "in step"},
		{4, 3, true, "downstream went back (truncated)"},
		{5, 4, false, "in step"},
		{7, 6, true, "upstream skipped 6"},
		{7, 6, true, "upstream repeated"},
		{8, 7, false, "in step"},
		{10, 57, true, "upstream skipped 9"},
		{11, 58, false, "in step"},
	}
	w := NewSyncWriter(50)
	for i, s := range steps {
		got := w.Record("topic", 0, s.up, s.down)
		want := []OffsetSync(nil)
		if s.now {
			want = []OffsetSync{{Topic: "topic", Partition: 0, UpstreamOffset: s.up, DownstreamOffset: s.down}}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d (%d->%d, %s): Record = %v, want %v", i, s.up, s.down, s.why, got, want)
		}
		for range got {
			w.Acked()
		}
		delayed, _ := w.Queued()
		if s.now && len(delayed) != 0 {
			t.Fatalf("step %d: a sync sent now left %v delayed", i, delayed)
		}
		if !s.now && (len(delayed) != 1 || delayed[0].UpstreamOffset != s.up) {
			t.Fatalf("step %d: delayed = %v, want this record's sync", i, delayed)
		}
	}
	// The last record's sync waits for the task's commit.
	want := []OffsetSync{{Topic: "topic", UpstreamOffset: 11, DownstreamOffset: 58}}
	if got := w.Pending(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Pending = %v, want %v", got, want)
	}
	if got := w.Pending(); got != nil {
		t.Fatalf("second Pending = %v, want nothing", got)
	}
}

// TestSyncWriterZeroLag is testZeroOffsetSync: offset.lag.max 0 syncs
// every record (a repeated downstream offset still syncs, as its upstream
// offset did not advance by one).
func TestSyncWriterZeroLag(t *testing.T) {
	w := NewSyncWriter(0)
	for _, r := range [][2]int64{{0, 100}, {2, 102}, {3, 153}, {4, 154}, {5, 155}, {6, 207}, {2, 208}, {3, 209}, {4, 3}, {5, 4}, {7, 6}, {7, 6}, {8, 7}, {10, 57}, {11, 58}} {
		if got := w.Record("t", 1, r[0], r[1]); len(got) != 1 {
			t.Fatalf("record %v: Record = %v, want its sync", r, got)
		}
		w.Acked()
	}
}

// TestSyncWriterQueue is OffsetSyncWriterTest's maybeQueue and promote
// cases: a record inside the lag is delayed, commit promotes only the
// latest delayed sync of a partition.
func TestSyncWriterQueue(t *testing.T) {
	w := NewSyncWriter(2)
	if got := w.Record("topic", 0, 0, 1); len(got) != 1 {
		t.Fatalf("first record: %v", got)
	}
	if got := w.Record("topic", 0, 1, 2); got != nil {
		t.Fatalf("second record (2-(1+1) = 0 < 2): %v", got)
	}
	w = NewSyncWriter(50)
	w.Record("topic", 0, 0, 100)
	w.Acked()
	w.Record("topic", 0, 1, 101)
	w.Record("topic", 0, 2, 102)
	want := []OffsetSync{{Topic: "topic", UpstreamOffset: 2, DownstreamOffset: 102}}
	if got := w.Pending(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Pending = %v, want %v", got, want)
	}
}

// TestSyncWriterOutstanding: at most MaxOutstandingOffsetSyncs syncs are
// out; others wait, one per partition, the newest replacing an older one
// in place (Kafka's LinkedHashMap), and go out on the next Record or
// Pending after an Acked (testFirePendingOffsetSyncs with a semaphore of
// 10 instead of 1).
func TestSyncWriterOutstanding(t *testing.T) {
	w := NewSyncWriter(100)
	for p := range int32(MaxOutstandingOffsetSyncs) {
		if got := w.Record("t", p, 0, 0); len(got) != 1 {
			t.Fatalf("partition %d: Record = %v, want its first sync", p, got)
		}
	}
	if w.Outstanding() != MaxOutstandingOffsetSyncs {
		t.Fatalf("Outstanding = %d", w.Outstanding())
	}
	// Partitions 10 and 11 get first syncs that must wait.
	if got := w.Record("t", 10, 0, 0); got != nil {
		t.Fatalf("over the limit: %v", got)
	}
	if got := w.Record("t", 11, 0, 0); got != nil {
		t.Fatalf("over the limit: %v", got)
	}
	// A newer immediate sync for partition 10 replaces its waiting one
	// and keeps its place before 11; a delayed one for 11 stays delayed.
	w.Record("t", 10, 5, 5)
	w.Record("t", 11, 1, 1)
	delayed, toSend := w.Queued()
	wantSend := []OffsetSync{{Topic: "t", Partition: 10, UpstreamOffset: 5, DownstreamOffset: 5}, {Topic: "t", Partition: 11}}
	wantDelayed := []OffsetSync{{Topic: "t", Partition: 11, UpstreamOffset: 1, DownstreamOffset: 1}}
	if !reflect.DeepEqual(toSend, wantSend) || !reflect.DeepEqual(delayed, wantDelayed) {
		t.Fatalf("Queued = %v, %v; want %v, %v", delayed, toSend, wantDelayed, wantSend)
	}
	// Acked makes room but sends nothing by itself.
	w.Acked()
	if _, toSend := w.Queued(); len(toSend) != 2 {
		t.Fatalf("Acked sent something: %v", toSend)
	}
	// Pending promotes 11's delayed sync over its waiting one, in place,
	// then sends what fits: one.
	if got, want := w.Pending(), wantSend[:1]; !reflect.DeepEqual(got, want) {
		t.Fatalf("Pending = %v, want %v", got, want)
	}
	w.Acked()
	if got, want := w.Record("t", 0, 1, 1), wantDelayed; !reflect.DeepEqual(got, want) {
		t.Fatalf("Record after Acked = %v, want the waiting %v", got, want)
	}
	// Acked without anything out does not make room beyond the limit.
	for range 3 * MaxOutstandingOffsetSyncs {
		w.Acked()
	}
	for p := range int32(MaxOutstandingOffsetSyncs + 2) {
		w.Record("u", p, 0, 0)
	}
	if w.Outstanding() != MaxOutstandingOffsetSyncs {
		t.Fatalf("Outstanding = %d after extra Acked, want %d", w.Outstanding(), MaxOutstandingOffsetSyncs)
	}
}

// TestSyncWriterPartitionsIndependent: each partition keeps its own state
// and delayed sync; Pending sends them in the order partitions were first
// delayed.
func TestSyncWriterPartitionsIndependent(t *testing.T) {
	w := NewSyncWriter(10)
	var sent []string
	send := func(s []OffsetSync) {
		for _, x := range s {
			sent = append(sent, fmt.Sprintf("%s-%d@%d:%d", x.Topic, x.Partition, x.UpstreamOffset, x.DownstreamOffset))
			w.Acked()
		}
	}
	send(w.Record("a", 0, 0, 0))
	send(w.Record("b", 0, 0, 0))
	send(w.Record("a", 1, 0, 0))
	send(w.Record("b", 0, 1, 1))
	send(w.Record("a", 0, 1, 1))
	send(w.Record("a", 1, 1, 1))
	send(w.Record("b", 0, 2, 2))
	send(w.Pending())
	want := []string{"a-0@0:0", "b-0@0:0", "a-1@0:0", "b-0@2:2", "a-0@1:1", "a-1@1:1"}
	if !reflect.DeepEqual(sent, want) {
		t.Fatalf("sent %v\nwant %v", sent, want)
	}
}
