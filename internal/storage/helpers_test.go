package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

var epoch0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// makeBatch builds a valid batch of n records with timestamps ts, ts+1, ...
// and values "v<tag>-<i>" padded to valueSize bytes.
func makeBatch(t testing.TB, n int, ts int64, tag string, valueSize int) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		v := fmt.Appendf(nil, "v%s-%d", tag, i)
		if len(v) < valueSize {
			v = append(v, bytes.Repeat([]byte{'.'}, valueSize-len(v))...)
		}
		recs[i] = record.Record{Offset: int64(i), Timestamp: ts + int64(i), Key: fmt.Appendf(nil, "k%d", i), Value: v}
	}
	b := record.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: recs}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 4096
	cfg.IndexIntervalBytes = 256
	cfg.RetentionMs = -1
	return cfg
}

type env struct {
	t     testing.TB
	mem   *vfs.Mem
	fs    vfs.FS
	clock *clock.Manual
	dir   string
}

func newEnv(t testing.TB) *env {
	mem := vfs.NewMem()
	return &env{t: t, mem: mem, fs: mem, clock: clock.NewManual(epoch0), dir: "/data/topic-0"}
}

var quiet = slog.New(slog.DiscardHandler)

func (e *env) options() Options {
	return Options{FS: e.fs, Clock: e.clock, Logger: quiet}
}

func (e *env) open(cfg Config) *Log {
	e.t.Helper()
	l, err := Open(e.dir, cfg, e.options())
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, b []byte) AppendResult {
	t.Helper()
	res, err := l.AppendAsLeader(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fataler is the part of testing.TB (and rapid.T) the helpers need.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// readAllRecords reads the log from its start to its end batch by batch and
// returns every record offset and value, checking each batch's CRC.
func readAllRecords(t fataler, l *Log) (offsets []int64, values []string) {
	t.Helper()
	off := l.LogStartOffset()
	end := l.LogEndOffset()
	for off < end {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(data) == 0 {
			t.Fatalf("empty read at %d below log end %d", off, end)
		}
		next := off
		err = record.ForEachBatch(trimPartial(data), func(batch []byte, h record.Header) error {
			if err := record.CheckCRC(batch); err != nil {
				return err
			}
			return record.Iterate(batch, 64<<20, func(r *record.Record) bool {
				if r.Offset >= off {
					offsets = append(offsets, r.Offset)
					values = append(values, string(r.Value))
				}
				return true
			})
		})
		if err != nil {
			t.Fatalf("batches at %d: %v", off, err)
		}
		h, _ := record.ParseHeader(lastWhole(data))
		next = h.NextOffset()
		if next <= off {
			t.Fatalf("no progress at %d", off)
		}
		off = next
	}
	return offsets, values
}

// trimPartial drops a partial batch at the end of a read, as clients do.
func trimPartial(data []byte) []byte {
	pos := 0
	for pos < len(data) {
		h, err := record.ParseHeader(data[pos:])
		if err != nil || pos+h.Size() > len(data) {
			break
		}
		pos += h.Size()
	}
	return data[:pos]
}

func lastWhole(data []byte) []byte {
	data = trimPartial(data)
	pos, last := 0, 0
	for pos < len(data) {
		h, _ := record.ParseHeader(data[pos:])
		last = pos
		pos += h.Size()
	}
	return data[last:]
}

// countingFS counts bytes read from .log files, to show what an open reads.
type countingFS struct {
	vfs.FS
	logBytes atomic.Int64
}

func (c *countingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

func (c *countingFS) Create(n string) (vfs.File, error)        { return c.wrap(c.FS.Create(n)) }
func (c *countingFS) OpenReadWrite(n string) (vfs.File, error) { return c.wrap(c.FS.OpenReadWrite(n)) }
func (c *countingFS) Open(n string) (vfs.File, error)          { return c.wrap(c.FS.Open(n)) }

type countingFile struct {
	vfs.File
	fs *countingFS
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if len(f.Name()) > 4 && f.Name()[len(f.Name())-4:] == ".log" {
		f.fs.logBytes.Add(int64(n))
	}
	return n, err
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// appended is what a single writer appended to one log: each batch as it
// went to the log (offsets and epoch assigned), by base offset, and the
// log end those appends reach. A batch is recorded before its append runs,
// so one whose write reached the file before the append failed (or before a
// crash image was taken) is known too.
type appended struct {
	batches map[int64][]byte
	end     int64
}

func newAppended() *appended { return &appended{batches: map[int64][]byte{}} }

// append appends batch as leader at epoch 0 and checks the offsets and
// bytes the log gave it. It returns the append's error.
func (a *appended) append(t fataler, l *Log, batch []byte) (AppendResult, error) {
	t.Helper()
	base := l.LogEndOffset()
	want := bytes.Clone(batch)
	record.AssignOffsets(want, base, 0, -1)
	h, err := record.ParseHeader(want)
	if err != nil {
		t.Fatalf("test batch: %v", err)
	}
	a.batches[base] = want
	a.end = max(a.end, h.NextOffset())
	res, err := l.AppendAsLeader(batch, 0)
	if err == nil && (res.FirstOffset != base || !bytes.Equal(batch, want)) {
		t.Fatalf("append at log end %d: got offset %d, batch rewritten other than as offset %d epoch 0 (first difference at byte %d)",
			base, res.FirstOffset, base, firstDifference(batch, want))
	}
	return res, err
}

// check holds a reopened log to what was appended: its end is at least
// durable (everything acknowledged as synced) and at most the end of what
// was written; from the log start to the log end it holds contiguous
// batches, each byte for byte the batch appended at its base offset.
func (a *appended) check(t fataler, l *Log, durable int64) {
	t.Helper()
	o := l.Offsets()
	if o.LogEndOffset < durable {
		t.Fatalf("log end %d below the acknowledged durable offset %d", o.LogEndOffset, durable)
	}
	if o.LogEndOffset > a.end {
		t.Fatalf("log end %d past the end %d of everything written", o.LogEndOffset, a.end)
	}
	next := int64(-1)
	for _, b := range readBatches(t, l) {
		h, _ := record.ParseHeader(b)
		want, ok := a.batches[h.BaseOffset]
		if !ok {
			t.Fatalf("batch at %d: no batch was appended there", h.BaseOffset)
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("batch at %d is not the batch appended there (%d bytes, appended %d, first difference at byte %d)",
				h.BaseOffset, len(b), len(want), firstDifference(b, want))
		}
		if next >= 0 && h.BaseOffset != next {
			t.Fatalf("batch at %d follows a batch ending at %d", h.BaseOffset, next)
		}
		if next < 0 && (h.BaseOffset > o.LogStartOffset || h.NextOffset() <= o.LogStartOffset) {
			t.Fatalf("first batch %d..%d does not hold the log start %d", h.BaseOffset, h.LastOffset(), o.LogStartOffset)
		}
		next = h.NextOffset()
	}
	if next < 0 {
		next = o.LogStartOffset
	}
	if next != o.LogEndOffset {
		t.Fatalf("batches end at %d, the log at %d", next, o.LogEndOffset)
	}
}

// readBatches returns the whole batches a read of the log from its start to
// its end gives, each checked for its CRC.
func readBatches(t fataler, l *Log) [][]byte {
	t.Helper()
	var out [][]byte
	for off, end := l.LogStartOffset(), l.LogEndOffset(); off < end; {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		next := off
		err = record.ForEachBatch(trimPartial(data), func(batch []byte, h record.Header) error {
			out = append(out, bytes.Clone(batch))
			next = h.NextOffset()
			return record.CheckCRC(batch)
		})
		if err != nil {
			t.Fatalf("batches at %d: %v", off, err)
		}
		if next <= off {
			t.Fatalf("no progress reading at %d below log end %d", off, end)
		}
		off = next
	}
	return out
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
