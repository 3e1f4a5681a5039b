package storage

// Fuzz targets for what storage reads back from disk: the checkpoint, the
// leader-epoch checkpoint, the cleaner checkpoint, file names, the
// indexes, and whole segments through recovery. (The producer snapshot's
// is FuzzProducerSnapshot, in producer_state_test.go.) None may panic;
// what one accepts must survive its own encoder.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add(checkpoint{clean: true, recoveryPoint: 5, logStartOffset: 1, nextOffset: 9, activeSize: 4096}.encode())
	f.Add(checkpoint{}.encode())
	f.Add([]byte("samsa-log-checkpoint 1\nclean 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		again, err := decodeCheckpoint(c.encode())
		if err != nil || again != c {
			t.Fatalf("%+v re-decodes as %+v, %v", c, again, err)
		}
	})
}

func FuzzDecodeEpochs(f *testing.F) {
	f.Add([]byte("0\n2\n0 0\n3 17\n"))
	f.Add([]byte("0\n0\n"))
	f.Add([]byte("0\n1\n 5 \t 9 \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := decodeEpochs(b)
		if err != nil {
			return
		}
		mem := vfs.NewMem()
		c := &epochCache{fsys: mem, path: "/leader-epoch-checkpoint", entries: entries}
		if err := mem.MkdirAll("/"); err != nil {
			t.Fatal(err)
		}
		if err := c.save(); err != nil {
			t.Fatal(err)
		}
		saved, err := vfs.ReadFile(mem, c.path)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeEpochs(saved)
		if err != nil || !slices.Equal(again, entries) {
			t.Fatalf("%v re-decodes as %v, %v", entries, again, err)
		}
	})
}

func FuzzCleanerCheckpoint(f *testing.F) {
	f.Add([]byte(cleanerCheckpointHeader + "\nfirst-dirty-offset 42\n"))
	f.Add([]byte(cleanerCheckpointHeader + "\nfirst-dirty-offset -1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mem := vfs.NewMem()
		if err := mem.MkdirAll("/d"); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(mem, filepath.Join("/d", cleanerCheckpointFile), b); err != nil {
			t.Fatal(err)
		}
		n, err := readCleanerCheckpoint(mem, "/d")
		if err != nil || n < 0 {
			t.Fatalf("content alone made %d, %v", n, err)
		}
		if err := writeCleanerCheckpoint(mem, "/d", n); err != nil {
			t.Fatal(err)
		}
		if again, err := readCleanerCheckpoint(mem, "/d"); err != nil || again != n {
			t.Fatalf("%d re-reads as %d, %v", n, again, err)
		}
	})
}

// FuzzFileNames: a name a log directory's listing accepts as a segment,
// index or snapshot file is the name the log gives that file, so the two
// never disagree about which file is which.
func FuzzFileNames(f *testing.F) {
	for _, n := range []string{"00000000000000000042.log", "00000000000000000000.index", "00000000000000001000.timeindex",
		"00000000000000000007.snapshot", "42.log", "-0000000000000000042.log"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if base, suffix, ok := parseSegmentFile(name); ok {
			if want := filepath.Base(segmentName("/d", base, suffix)); want != name {
				t.Fatalf("%q parses as segment %d%s, whose name is %q", name, base, suffix, want)
			}
		}
		if off, ok := ParseSnapshotName(name); ok {
			if want := filepath.Base(SnapshotName("/d", off)); want != name {
				t.Fatalf("%q parses as the snapshot at %d, whose name is %q", name, off, want)
			}
		}
	})
}

// FuzzLoadIndexes: what the index loaders accept is sorted and inside the
// log they index.
func FuzzLoadIndexes(f *testing.F) {
	off := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 0), 0)
	off = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(off, 4), 300)
	tim := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, 1000), 0)
	tim = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(tim, 2000), 3)
	f.Add(off, tim, int64(4096), uint32(10))
	f.Add([]byte{}, []byte{}, int64(0), uint32(0))
	f.Fuzz(func(t *testing.T, offsets, times []byte, logSize int64, nextRel uint32) {
		mem := vfs.NewMem()
		if err := mem.MkdirAll("/d"); err != nil {
			t.Fatal(err)
		}
		write := func(name string, b []byte) string {
			if err := vfs.WriteFileAtomic(mem, name, b); err != nil {
				t.Fatal(err)
			}
			return name
		}
		if entries, err := loadOffsetIndex(mem, write("/d/0.index", offsets), logSize); err == nil {
			for i, e := range entries {
				if int64(e.position) >= logSize || i > 0 && (e.relOffset <= entries[i-1].relOffset || e.position <= entries[i-1].position) {
					t.Fatalf("offset index entry %d %+v accepted", i, e)
				}
			}
		}
		if entries, err := loadTimeIndex(mem, write("/d/0.timeindex", times), nextRel); err == nil {
			for i, e := range entries {
				if e.relOffset >= nextRel || i > 0 && (e.timestamp <= entries[i-1].timestamp || e.relOffset < entries[i-1].relOffset) {
					t.Fatalf("time index entry %d %+v accepted", i, e)
				}
			}
		}
	})
}

// FuzzRecoverSegment writes arbitrary bytes as a log's only segment (and
// its offset index) and opens the log without a clean checkpoint, as after
// a crash: recovery must keep a prefix of whole, valid batches with
// increasing offsets, and the log must take and return an append after.
func FuzzRecoverSegment(f *testing.F) {
	var seg []byte
	for i := range 3 {
		seg = append(seg, makeFuzzBatch(f, int64(i*2), 2)...)
	}
	f.Add(seg, []byte{})
	f.Add(seg[:len(seg)-7], []byte{0, 0, 0, 2, 0, 0, 0, 80})
	f.Add(append(slices.Clone(seg), 0, 0, 0, 0, 0, 0, 0, 9), []byte{})
	f.Fuzz(func(t *testing.T, segment, index []byte) {
		e := newEnv(t)
		if err := e.fs.MkdirAll(e.dir); err != nil {
			t.Fatal(err)
		}
		for suffix, b := range map[string][]byte{logSuffix: segment, indexSuffix: index} {
			if err := vfs.WriteFileAtomic(e.fs, segmentName(e.dir, 0, suffix), b); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Open(e.dir, testConfig(), e.options())
		if err != nil {
			return // refusing to open is allowed; guessing is not
		}
		defer l.Close()
		checkRecovered(t, l, segment)
		next := l.LogEndOffset()
		res, err := l.AppendAsLeader(makeFuzzBatch(t, 0, 1), 0)
		if err != nil {
			t.Fatalf("append after recovery: %v", err)
		}
		if res.FirstOffset != next {
			t.Fatalf("append after recovery at %d, log end was %d", res.FirstOffset, next)
		}
		checkRecovered(t, l, nil)
	})
}

// checkRecovered reads the whole log: whole batches, CRCs that match,
// offsets that increase to the log end; from a single recovered segment,
// a prefix of what was written.
func checkRecovered(t *testing.T, l *Log, written []byte) {
	t.Helper()
	start, end := l.LogStartOffset(), l.LogEndOffset()
	if end < start {
		t.Fatalf("log end %d below log start %d", end, start)
	}
	var all []byte
	for off := start; off < end; {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			t.Fatalf("read at %d (log %d..%d): %v", off, start, end, err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil || len(data) == 0 {
			t.Fatalf("read at %d (log %d..%d): %d bytes, %v", off, start, end, len(data), err)
		}
		next, first := off, true
		err = record.ForEachBatch(data, func(batch []byte, h record.Header) error {
			if err := record.CheckCRC(batch); err != nil {
				return err
			}
			// The first batch of a read may start before off: it holds off.
			if !first && h.BaseOffset < next || h.NextOffset() <= next {
				return fmt.Errorf("batch %d..%d after offset %d", h.BaseOffset, h.LastOffset(), next)
			}
			next, first = h.NextOffset(), false
			return nil
		})
		if err != nil {
			t.Fatalf("recovered batches at %d: %v", off, err)
		}
		if next <= off {
			t.Fatalf("no progress reading at %d", off)
		}
		all = append(all, data...)
		off = next
	}
	if written != nil && !bytes.HasPrefix(written, all) {
		t.Fatalf("recovery kept %d bytes that are not a prefix of the %d written", len(all), len(written))
	}
}

func makeFuzzBatch(t testing.TB, base int64, n int) []byte {
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Offset: base + int64(i), Timestamp: 1000 + int64(i), Key: []byte("k"), Value: []byte("v")}
	}
	b := record.Batch{BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: recs}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
