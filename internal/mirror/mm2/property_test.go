package mm2

import (
	"testing"

	"pgregory.net/rapid"
)

// mirroredLog is a source partition and its mirror: upstream offsets with
// gaps (compaction, transaction markers), some records not mirrored
// (filtered), the mirrored ones at consecutive downstream offsets from a
// base (the remote topic may hold other records first).
type mirroredLog struct {
	upstream   []int64 // every source record's offset, increasing
	mirrored   []bool
	downstream []int64 // the target offset of each mirrored record, else -1
	end        int64   // the remote partition's end offset
}

func drawLog(t *rapid.T) mirroredLog {
	n := rapid.IntRange(0, 300).Draw(t, "records")
	var l mirroredLog
	up := rapid.Int64Range(0, 1000).Draw(t, "firstUpstream")
	down := rapid.Int64Range(0, 1000).Draw(t, "firstDownstream")
	gappy := rapid.Bool().Draw(t, "gappy")
	for i := range n {
		if gappy && rapid.IntRange(0, 4).Draw(t, "gap?") == 0 {
			up += rapid.Int64Range(1, 200).Draw(t, "gap")
		}
		l.upstream = append(l.upstream, up)
		m := rapid.IntRange(0, 5).Draw(t, "mirror?") != 0
		l.mirrored = append(l.mirrored, m)
		if m {
			l.downstream = append(l.downstream, down)
			down++
		} else {
			l.downstream = append(l.downstream, -1)
		}
		up++
		_ = i
	}
	l.end = down
	return l
}

// truePosition is where a group at upstream offset u must start on the
// target to read every mirrored record it has not read: the downstream
// offset of the first mirrored record at or after u, or the end.
func (l mirroredLog) truePosition(u int64) int64 {
	for i, up := range l.upstream {
		if up >= u && l.mirrored[i] {
			return l.downstream[i]
		}
	}
	return l.end
}

// TestTranslateNeverSkips runs a random mirrored log through SyncWriter
// (random offset.lag.max, commits and acks at random points) into a
// SyncStore (history kept or not while loading, ready at a random point),
// and checks that no translation is past the true position of its upstream
// offset (a group may re-read, never skip) and that translation is
// monotone in the upstream offset.
func TestTranslateNeverSkips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLog(t)
		w := NewSyncWriter(rapid.Int64Range(0, 150).Draw(t, "maxOffsetLag"))
		s := NewSyncStore()
		s.SetInitializationMustReadToEnd(rapid.Bool().Draw(t, "mustReadToEnd"))
		readyAt := rapid.IntRange(0, len(l.upstream)).Draw(t, "readyAt")
		var inflight int
		send := func(syncs []OffsetSync) {
			for _, x := range syncs {
				s.Add(x)
			}
			inflight += len(syncs)
		}
		for i := range l.upstream {
			if i == readyAt {
				s.ReadToEnd()
			}
			if l.mirrored[i] {
				send(w.Record("t", 0, l.upstream[i], l.downstream[i]))
			}
			for inflight > 0 && rapid.Bool().Draw(t, "ack") {
				w.Acked()
				inflight--
			}
			if rapid.IntRange(0, 20).Draw(t, "commit?") == 0 {
				send(w.Pending())
			}
		}
		if !s.Ready() {
			s.ReadToEnd()
		}
		if rapid.Bool().Draw(t, "finalCommit") {
			send(w.Pending())
		}
		maxUp := int64(0)
		if len(l.upstream) > 0 {
			maxUp = l.upstream[len(l.upstream)-1]
		}
		prev := int64(-1)
		for u := int64(0); u <= maxUp+2; u++ {
			d, ok := s.Translate("t", 0, u)
			if !ok {
				d = -1
			}
			if truth := l.truePosition(u); d > truth {
				t.Fatalf("Translate(%d) = %d, past the true position %d", u, d, truth)
			}
			if d < prev {
				t.Fatalf("Translate(%d) = %d after Translate(%d) = %d: not monotone", u, d, u-1, prev)
			}
			prev = d
		}
	})
}

// TestSyncStoreInvariants: for any sequence of syncs (upstream offsets
// mostly rising with random steps, sometimes rewinding), invariants A to C
// hold after every Add.
func TestSyncStoreInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := NewSyncStore()
		s.SetInitializationMustReadToEnd(rapid.Bool().Draw(t, "mustReadToEnd"))
		n := rapid.IntRange(1, 400).Draw(t, "syncs")
		readyAt := rapid.IntRange(0, n).Draw(t, "readyAt")
		up := int64(0)
		for i := range n {
			if i == readyAt {
				s.ReadToEnd()
			}
			if rapid.IntRange(0, 50).Draw(t, "rewind?") == 0 {
				up = rapid.Int64Range(0, up).Draw(t, "rewindTo")
			} else {
				up += rapid.Int64Range(0, 1<<rapid.IntRange(0, 40).Draw(t, "bits")).Draw(t, "step")
			}
			addSync(s, up, up)
			if got := s.syncs[topicPartition{tpTopic, tpPartition}][0].UpstreamOffset; got != up {
				t.Fatalf("invariant A: syncs[0] = %d after adding %d", got, up)
			}
			checkInvariantsRapid(t, s)
		}
	})
}

func checkInvariantsRapid(t *rapid.T, s *SyncStore) {
	arr := s.syncs[topicPartition{tpTopic, tpPartition}]
	for j := range SyncsPerPartition {
		for i := range j {
			// As Kafka's assertSparseSyncInvariant, syncs with equal
			// upstream offsets are exempt (a repeated sync).
			iu, ju := arr[i].UpstreamOffset, arr[j].UpstreamOffset
			if iu == ju {
				continue
			}
			if lower := ju + int64(1)<<max(i-2, 0); lower >= 0 && iu < lower {
				t.Fatalf("invariant C(%d,%d): %d < %d", i, j, iu, lower)
			}
			if upper := ju + int64(1)<<j - int64(1)<<i; upper >= 0 && iu > upper {
				t.Fatalf("invariant B(%d,%d): %d > %d", i, j, iu, upper)
			}
		}
	}
}

// TestCheckpointsNeverBackwards: whatever the store translates, the
// checkpoints Next emits for a group and partition only move the
// downstream offset back when the group's upstream offset went back.
func TestCheckpointsNeverBackwards(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := readyStore()
		c := NewCheckpoints()
		var last *Checkpoint
		up := int64(0)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			if rapid.Bool().Draw(t, "sync?") {
				u := rapid.Int64Range(0, 1000).Draw(t, "syncUp")
				addSync(s, u, u+rapid.Int64Range(0, 10).Draw(t, "syncShift"))
			}
			up = rapid.Int64Range(0, 1000).Draw(t, "groupOffset")
			cp, ok := c.Next("g", tpTopic, tpPartition, up, "", s, remoteTopic)
			if !ok {
				continue
			}
			if cp.DownstreamOffset < 0 {
				t.Fatalf("emitted a negative downstream offset: %+v", cp)
			}
			if last != nil && cp.DownstreamOffset <= last.DownstreamOffset && cp.UpstreamOffset >= last.UpstreamOffset {
				t.Fatalf("checkpoint %+v after %+v: not more recent", cp, *last)
			}
			last = &cp
		}
	})
}

// TestRecordsRoundTrip: every record decodes to what was encoded.
func TestRecordsRoundTrip(t *testing.T) {
	str := rapid.StringN(0, 40, -1)
	rapid.Check(t, func(t *rapid.T) {
		o := OffsetSync{Topic: str.Draw(t, "topic"), Partition: rapid.Int32().Draw(t, "p"), UpstreamOffset: rapid.Int64().Draw(t, "u"), DownstreamOffset: rapid.Int64().Draw(t, "d")}
		if got, err := DecodeOffsetSync(o.Key(), o.Value()); err != nil || got != o {
			t.Fatalf("offset sync %+v: %+v, %v", o, got, err)
		}
		c := Checkpoint{Group: str.Draw(t, "group"), Topic: str.Draw(t, "ctopic"), Partition: rapid.Int32().Draw(t, "cp"), UpstreamOffset: rapid.Int64().Draw(t, "cu"), DownstreamOffset: rapid.Int64().Draw(t, "cd"), Metadata: str.Draw(t, "meta")}
		if got, err := DecodeCheckpoint(c.Key(), c.Value()); err != nil || got != c {
			t.Fatalf("checkpoint %+v: %+v, %v", c, got, err)
		}
		h := Heartbeat{SourceCluster: str.Draw(t, "src"), TargetCluster: str.Draw(t, "dst"), Timestamp: rapid.Int64().Draw(t, "ts")}
		if got, err := DecodeHeartbeat(h.Key(), h.Value()); err != nil || got != h {
			t.Fatalf("heartbeat %+v: %+v, %v", h, got, err)
		}
		conn, cluster, topic := str.Draw(t, "conn"), str.Draw(t, "cluster"), str.Draw(t, "stopic")
		p := rapid.Int32Range(0, 1<<31-1).Draw(t, "sp")
		off := rapid.Int64Range(-1, 1<<63-1).Draw(t, "off")
		c2, cl2, t2, p2, o2, err := DecodeSourceOffset(SourceOffsetKey(conn, cluster, topic, p), SourceOffsetValue(off))
		if err != nil || c2 != conn || cl2 != cluster || t2 != topic || p2 != p || o2 != off {
			t.Fatalf("source offset %q %q %q %d %d: %q %q %q %d %d %v", conn, cluster, topic, p, off, c2, cl2, t2, p2, o2, err)
		}
	})
}
