package storage

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
)

// sourceBatch is a batch as a mirror sends it: the source's offsets and
// partition leader epoch, no producer.
func sourceBatch(t testing.TB, base int64, n int) []byte {
	t.Helper()
	b := makeBatch(t, n, 1000+base, "s", 10)
	record.AssignOffsets(b, base, 42, -1)
	return b
}

// A mirror append keeps the source's offsets and batches byte for byte
// but for the leader epoch, which becomes the leader's: an empty log
// restarts at the first base, a later batch leaves a gap, a batch the
// log holds is skipped, one that holds the log end is refused, and
// nothing changes on a refusal.
func TestAppendMirror(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.OffsetGaps = true
	l := e.open(cfg)
	defer func() { l.Close() }()
	var want [][]byte
	appendOK := func(data []byte, first, last int64, dup bool) {
		t.Helper()
		sent := bytes.Clone(data)
		res, err := l.AppendMirror(data, 3)
		if err != nil {
			t.Fatal(err)
		}
		if res.FirstOffset != first || res.LastOffset != last || res.Duplicate != dup || res.LogAppendTime != -1 {
			t.Fatalf("append: %+v, want %d..%d duplicate %v", res, first, last, dup)
		}
		if !dup {
			for pos := 0; pos < len(sent); {
				h, _ := record.ParseHeader(sent[pos:])
				if h.LastOffset() >= first {
					b := bytes.Clone(sent[pos : pos+h.Size()])
					record.SetPartitionLeaderEpoch(b, 3)
					want = append(want, b)
				}
				pos += h.Size()
			}
		}
	}
	check := func(what string, start, end int64) {
		t.Helper()
		if o := l.Offsets(); o.LogStartOffset != start || o.LogEndOffset != end {
			t.Fatalf("%s: log %d..%d, want %d..%d", what, o.LogStartOffset, o.LogEndOffset, start, end)
		}
		if got := readBatches(t, l); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("%s: %d batches differ from the %d sent", what, len(got), len(want))
		}
	}

	appendOK(sourceBatch(t, 100, 5), 100, 104, false)
	check("empty log restarted at the first base", 100, 105)
	appendOK(sourceBatch(t, 110, 3), 110, 112, false)
	check("gap", 100, 113)
	appendOK(sourceBatch(t, 100, 5), 100, 104, true)
	appendOK(slices.Concat(sourceBatch(t, 110, 3), sourceBatch(t, 120, 2), sourceBatch(t, 122, 1)), 120, 122, false)
	check("retries skipped, the rest appended", 100, 123)
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{3, 100}}) {
		t.Fatalf("epochs %v", got)
	}

	for _, c := range []struct {
		name  string
		data  []byte
		epoch int32
		want  error
	}{
		{"straddles the log end", sourceBatch(t, 121, 4), 3, ErrMirrorOverlap},
		{"a retry then a straddling batch", slices.Concat(sourceBatch(t, 120, 2), sourceBatch(t, 122, 3)), 3, ErrMirrorOverlap},
		{"batches out of order", slices.Concat(sourceBatch(t, 130, 2), sourceBatch(t, 125, 2)), 3, ErrInvalidOffset},
		{"bad CRC", func() []byte { b := sourceBatch(t, 130, 2); b[len(b)-1] ^= 1; return b }(), 3, record.ErrCorrupt},
		{"older leader epoch", sourceBatch(t, 130, 2), 2, ErrLeaderEpochRegression},
	} {
		if _, err := l.AppendMirror(c.data, c.epoch); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		check(c.name, 100, 123)
	}
	var overlap *MirrorOverlapError
	if _, err := l.AppendMirror(sourceBatch(t, 121, 4), 3); !errors.As(err, &overlap) || overlap.LogEndOffset != 123 {
		t.Fatalf("overlap error %v", err)
	}

	// Promoted: the topic no longer sets OffsetGaps, and the log is
	// recovered from scratch; the gaps stay, and ordinary appends go on
	// after the log end.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.fs.Remove(filepath.Join(e.dir, checkpointFile)); err != nil {
		t.Fatal(err)
	}
	l = e.open(testConfig())
	check("recovered after promotion", 100, 123)
	if res, err := l.AppendAsLeader(makeBatch(t, 2, 5000, "p", 10), 3); err != nil || res.FirstOffset != 123 {
		t.Fatalf("ordinary append after promotion: %+v %v", res, err)
	}
}

// On an empty log whose start is past a mirror batch's base (the source's
// log start fell inside it), the batch is taken whole and the log start
// kept, as a follower's log does.
func TestAppendMirrorStraddlingLogStart(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.OffsetGaps = true
	l := e.open(cfg)
	defer l.Close()
	if err := l.TruncateFullyAndStartAt(12); err != nil {
		t.Fatal(err)
	}
	res, err := l.AppendMirror(sourceBatch(t, 10, 5), 0)
	if err != nil {
		t.Fatal(err)
	}
	if o := l.Offsets(); res.FirstOffset != 10 || o.LogStartOffset != 12 || o.LogEndOffset != 15 {
		t.Fatalf("append %+v, log %+v", res, o)
	}
}

// A follower takes the leader's gaps on any log, as Kafka's does, and a
// log that took one recovers it.
func TestFollowerGapSurvivesRecovery(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for _, b := range [][]byte{leaderBatch(t, 0, 4, 0), leaderBatch(t, 10, 2, 0), leaderBatch(t, 20, 2, 1)} {
		if _, err := l.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.fs.Remove(filepath.Join(e.dir, checkpointFile)); err != nil {
		t.Fatal(err)
	}
	l = e.open(testConfig())
	defer l.Close()
	if got := l.LogEndOffset(); got != 22 {
		t.Fatalf("log end %d after recovery, want 22", got)
	}
}
