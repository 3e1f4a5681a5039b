package mm2

import (
	"strings"
	"testing"
)

// remoteTopic is DefaultReplicationPolicy's renaming for source "source1"
// and target "target2", as MirrorCheckpointTask.renameTopicPartition uses
// it: a topic that came from the target goes back to its original name,
// any other gets the source's prefix.
func remoteTopic(topic string) string {
	if rest, ok := strings.CutPrefix(topic, "target2."); ok {
		return rest
	}
	return "source1." + topic
}

func expectCheckpoint(t *testing.T, c *Checkpoints, s *SyncStore, group, topic string, partition int32, up int64, want *Checkpoint) {
	t.Helper()
	got, ok := c.Next(group, topic, partition, up, "", s, remoteTopic)
	switch {
	case want == nil && ok:
		t.Fatalf("Next(%s, %s-%d, %d) = %+v, want none", group, topic, partition, up, got)
	case want != nil && (!ok || got != *want):
		t.Fatalf("Next(%s, %s-%d, %d) = %+v, %v; want %+v", group, topic, partition, up, got, ok, *want)
	}
}

// TestCheckpointNext is MirrorCheckpointTaskTest.testCheckpoint: the
// checkpoint names the renamed topic and translates through the store.
func TestCheckpointNext(t *testing.T) {
	s := readyStore()
	s.Add(OffsetSync{Topic: "topic1", Partition: 2, UpstreamOffset: 3, DownstreamOffset: 4})
	s.Add(OffsetSync{Topic: "target2.topic5", Partition: 6, UpstreamOffset: 7, DownstreamOffset: 8})
	c := NewCheckpoints()
	got, ok := c.Next("group9", "topic1", 2, 10, "meta", s, remoteTopic)
	want := Checkpoint{Group: "group9", Topic: "source1.topic1", Partition: 2, UpstreamOffset: 10, DownstreamOffset: 5, Metadata: "meta"}
	if !ok || got != want {
		t.Fatalf("Next = %+v, %v; want %+v", got, ok, want)
	}
	expectCheckpoint(t, c, s, "group11", "target2.topic5", 6, 12, &Checkpoint{Group: "group11", Topic: "topic5", Partition: 6, UpstreamOffset: 12, DownstreamOffset: 9})
	expectCheckpoint(t, c, s, "group13", "target2.topic5", 6, 7, &Checkpoint{Group: "group13", Topic: "topic5", Partition: 6, UpstreamOffset: 7, DownstreamOffset: 8})
	// testNoCheckpointForTopicWithoutOffsetSyncs.
	expectCheckpoint(t, c, s, "group9", "topic1", 1, 10, nil)
	// Before every sync: Kafka's -1, no checkpoint.
	expectCheckpoint(t, c, s, "group14", "topic1", 2, 2, nil)
	// Not read to end: nothing.
	expectCheckpoint(t, c, NewSyncStore(), "group15", "topic1", 2, 10, nil)
	if got, ok := c.Get("group9", "source1.topic1", 2); !ok || got != want {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	if all := c.All(); len(all) != 3 || all[0].Group != "group11" || all[2].Group != "group9" {
		t.Fatalf("All = %+v", all)
	}
}

// TestCheckpointFilter: a checkpoint is emitted the first time, when the
// downstream offset advances, or when the upstream offset goes back;
// never for a repeat or a downstream step back.
func TestCheckpointFilter(t *testing.T) {
	s := readyStore()
	s.Add(OffsetSync{Topic: "t", UpstreamOffset: 100, DownstreamOffset: 1000})
	c := NewCheckpoints()
	cp := func(up, down int64) *Checkpoint {
		return &Checkpoint{Group: "g", Topic: "source1.t", UpstreamOffset: up, DownstreamOffset: down}
	}
	expectCheckpoint(t, c, s, "g", "t", 0, 100, cp(100, 1000)) // first
	expectCheckpoint(t, c, s, "g", "t", 0, 100, nil)           // repeated
	expectCheckpoint(t, c, s, "g", "t", 0, 150, cp(150, 1001)) // downstream advanced
	expectCheckpoint(t, c, s, "g", "t", 0, 180, nil)           // same downstream 1001
	expectCheckpoint(t, c, s, "g", "t", 0, 100, cp(100, 1000)) // upstream rewind: follow it back
	expectCheckpoint(t, c, s, "other", "t", 0, 100, &Checkpoint{Group: "other", Topic: "source1.t", UpstreamOffset: 100, DownstreamOffset: 1000})
}

// TestCheckpointMonotonicIfStoreRewinds is
// testCheckpointRecordsMonotonicIfStoreRewinds: when the store forgets the
// sync a checkpoint used, the same group offset translates lower and is
// not emitted; a group that rewinds upstream still is.
func TestCheckpointMonotonicIfStoreRewinds(t *testing.T) {
	s := readyStore()
	c := NewCheckpoints()
	up, down := int64(11), int64(4)
	next := func() {
		s.Add(OffsetSync{Topic: "topic1", UpstreamOffset: up, DownstreamOffset: down})
		up++
		down++
	}
	next()
	next()
	group, wantDown := up, down
	expectCheckpoint(t, c, s, "g1", "topic1", 0, group, &Checkpoint{Group: "g1", Topic: "source1.topic1", UpstreamOffset: group, DownstreamOffset: wantDown})
	for range 4 {
		next()
	}
	s.Add(OffsetSync{Topic: "topic1", UpstreamOffset: up, DownstreamOffset: down})
	if d, _ := s.Translate("topic1", 0, group); d == wantDown {
		t.Fatalf("the store still translates %d to %d; the scenario needs it to forget", group, d)
	}
	expectCheckpoint(t, c, s, "g1", "topic1", 0, group, nil)
	if _, ok := c.Next("g1", "topic1", 0, group-1, "", s, remoteTopic); !ok {
		t.Fatal("upstream rewind not checkpointed")
	}
}

// TestCheckpointRestart is testCheckpointsTaskRestartUsesExistingCheckpoints:
// checkpoints loaded from the topic stop a restarted task, whose store
// kept other syncs, from moving a group backwards.
func TestCheckpointRestart(t *testing.T) {
	s := NewSyncStore()
	s.SetInitializationMustReadToEnd(false)
	for i := int64(100); i <= 300; i += 100 {
		s.Add(OffsetSync{Topic: "t1", UpstreamOffset: i, DownstreamOffset: i})
	}
	s.ReadToEnd()
	first := Checkpoint{Group: "group1", Topic: "source1.t1", UpstreamOffset: 250, DownstreamOffset: 201}
	expectCheckpoint(t, NewCheckpoints(), s, "group1", "t1", 0, 250, &first)

	s2 := NewSyncStore()
	s2.SetInitializationMustReadToEnd(false)
	for i := int64(175); i <= 475; i += 100 {
		s2.Add(OffsetSync{Topic: "t1", UpstreamOffset: i, DownstreamOffset: i})
	}
	s2.ReadToEnd()
	c := NewCheckpoints()
	c.Load(first)
	for _, up := range []int64{250, 370} {
		if d, ok := s2.Translate("t1", 0, up); !ok || d != 176 {
			t.Fatalf("Translate(%d) = %d, %v; want 176", up, d, ok)
		}
		expectCheckpoint(t, c, s2, "group1", "t1", 0, up, nil)
	}
	expectCheckpoint(t, c, s2, "group1", "t1", 0, 400, &Checkpoint{Group: "group1", Topic: "source1.t1", UpstreamOffset: 400, DownstreamOffset: 376})
}

// TestCheckpointLoadLatestWins: the topic's later record for a partition
// replaces an earlier one.
func TestCheckpointLoadLatestWins(t *testing.T) {
	c := NewCheckpoints()
	c.Load(Checkpoint{Group: "g", Topic: "a.t", UpstreamOffset: 10, DownstreamOffset: 50})
	c.Load(Checkpoint{Group: "g", Topic: "a.t", UpstreamOffset: 5, DownstreamOffset: 20})
	if got, _ := c.Get("g", "a.t", 0); got.DownstreamOffset != 20 {
		t.Fatalf("Get = %+v, want the later record", got)
	}
}
