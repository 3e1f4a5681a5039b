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
