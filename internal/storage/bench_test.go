//go:build linux && (amd64 || arm64)

// The benchmarks need fdatasync and fadvise, which only Linux has; fadvise
// goes through the raw syscall, whose number and arguments are only checked
// for these two architectures.

package storage

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// These benchmarks run the log on the real filesystem (b.TempDir), beside
// BenchmarkRawDisk, which measures the same machine without our code, so a
// number here can be read as a fraction of what the disk allows. How they
// were run and what they showed is in docs/PERFORMANCE.md.

// benchSize is a batch shape: Kafka producers send anything from a few
// small records to batch.size (16 KiB by default) and beyond; 1 KiB shows
// the per-batch overhead, 64 KiB the per-byte cost.
type benchSize struct {
	name    string
	records int
	bytes   int
}

var benchSizes = []benchSize{
	{"1KiB", 8, 1 << 10},
	{"64KiB", 64, 64 << 10},
}

// benchTimestamp is fixed so every append of the same batch carries the
// same timestamp: the time index then stops growing after its first entry,
// and segment.ms never rolls mid-benchmark.
var benchTimestamp = epoch0.UnixMilli()

// benchBatch builds one batch of sz.records records whose encoded size is
// within 0.1% of sz.bytes (1029 and 65587 bytes). Only the value length is
// varied; the record framing around it grows by varint steps, so one
// correction after a first guess is enough.
func benchBatch(b *testing.B, sz benchSize) []byte {
	b.Helper()
	valueSize := sz.bytes / sz.records
	batch := makeBatch(b, sz.records, benchTimestamp, "bench", valueSize)
	valueSize += (sz.bytes - len(batch)) / sz.records
	return makeBatch(b, sz.records, benchTimestamp, "bench", valueSize)
}

// syncCountingFS counts File.Sync calls (each one fdatasync on vfs.OS), so a
// benchmark can report how many appends share one. The counters cost an
// atomic add per Sync, nothing on the write path.
type syncCountingFS struct {
	vfs.FS
	syncs    atomic.Int64 // every Sync: log, offset index, time index, checkpoint
	logSyncs atomic.Int64 // Syncs of .log files: one per segment per flush
}

func (c *syncCountingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &syncCountingFile{File: f, fs: c, isLog: strings.HasSuffix(f.Name(), logSuffix)}, nil
}

func (c *syncCountingFS) Create(n string) (vfs.File, error) { return c.wrap(c.FS.Create(n)) }
func (c *syncCountingFS) OpenReadWrite(n string) (vfs.File, error) {
	return c.wrap(c.FS.OpenReadWrite(n))
}
func (c *syncCountingFS) Open(n string) (vfs.File, error) { return c.wrap(c.FS.Open(n)) }

type syncCountingFile struct {
	vfs.File
	fs    *syncCountingFS
	isLog bool
}

func (f *syncCountingFile) Sync() error {
	f.fs.syncs.Add(1)
	if f.isLog {
		f.fs.logSyncs.Add(1)
	}
	return f.File.Sync()
}

func openBenchLog(b *testing.B, dir string, fsys vfs.FS) *Log {
	b.Helper()
	cfg := DefaultConfig()
	cfg.RetentionMs = -1
	l, err := Open(dir, cfg, Options{FS: fsys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	// A leader records its epoch before its first append, as the broker
	// does on becoming leader; otherwise the first append would pay for
	// the epoch checkpoint's atomic write inside the timed loop.
	if err := l.AssignEpoch(0); err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkAppend measures AppendAsLeader of one batch per op:
//
//   - nosync: appends only; the data stays in the page cache, as with
//     Kafka's default flush settings (acks=all relies on replication).
//   - sync-each: one writer that waits for its append to be durable before
//     the next, the worst case for a single producer with flush.messages=1.
//   - groupcommit/writers=N: N writers each appending then calling Sync
//     for their own offset, so concurrent waits share one flush.
//
// fsyncs/op counts every fdatasync (a flush syncs .log files; a roll writes
// and syncs both index files); appends/flush is how many appends one flush
// made durable.
func BenchmarkAppend(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			batch := benchBatch(b, sz)
			b.Run("nosync", func(b *testing.B) { benchAppend(b, batch, 1, false) })
			b.Run("sync-each", func(b *testing.B) { benchAppend(b, batch, 1, true) })
			for _, writers := range []int{8, 64} {
				b.Run("groupcommit/writers="+strconv.Itoa(writers), func(b *testing.B) { benchAppend(b, batch, writers, true) })
			}
		})
	}
}

func benchAppend(b *testing.B, batch []byte, writers int, durable bool) {
	fsys := &syncCountingFS{FS: vfs.OS}
	l := openBenchLog(b, filepath.Join(b.TempDir(), "topic-0"), fsys)
	// Closing flushes whatever nosync left in the page cache; that is not
	// part of the measurement.
	defer func() {
		b.StopTimer()
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	// Each writer appends its own copy: AppendAsLeader rewrites the base
	// offset in place, as the broker does in a request's buffer.
	copies := make([][]byte, writers)
	for i := range copies {
		copies[i] = append([]byte(nil), batch...)
	}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	syncs0, flushes0 := fsys.syncs.Load(), fsys.logSyncs.Load()
	b.ResetTimer()

	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	for _, mine := range copies {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				res, err := l.AppendAsLeader(mine, 0)
				if err == nil && durable {
					err = l.Sync(res.LastOffset + 1)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()

	b.StopTimer()
	syncs, flushes := fsys.syncs.Load()-syncs0, fsys.logSyncs.Load()-flushes0
	b.ReportMetric(float64(syncs)/float64(b.N), "fsyncs/op")
	if flushes > 0 {
		b.ReportMetric(float64(b.N)/float64(flushes), "appends/flush")
	}
	if got := l.LogEndOffset(); got != int64(b.N)*int64(batchRecords(b, batch)) {
		b.Errorf("log end %d after %d appends", got, b.N)
	}
}

func batchRecords(b *testing.B, batch []byte) int32 {
	h, err := record.ParseHeader(batch)
	if err != nil {
		b.Fatal(err)
	}
	return h.NumRecords
}

// readMaxBytes is the consumer's default max.partition.fetch.bytes.
const readMaxBytes = 1 << 20

// readLogBytes is the size of the log BenchmarkRead reads: large enough
// that the offset index lookup is not trivially short, small enough to
// stay in the page cache on any machine that runs the suite.
const readLogBytes = 256 << 20

// BenchmarkRead reads a 256 MiB log from start to end in 1 MiB fetches, as
// a consumer catching up does, and then around again. The log was just
// written and flushed, so it is in the page cache: this is the path of a
// consumer near the tail, not of one reading cold data from disk.
//
//   - locate: Read and Release only; what the broker pays before handing
//     the range to sendfile.
//   - readat: Read, then one pread into a reused buffer (the copy alone).
//   - readall: Read then ReadAll, which allocates the buffer each time (the
//     TLS and tools path).
//
// Each op moves about 1 MiB; for locate, MB/s is the rate at which ranges
// are found, not bytes copied.
func BenchmarkRead(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			l, starts := buildReadLog(b, sz)
			defer l.Close()
			b.Run("locate", func(b *testing.B) { benchRead(b, l, starts, readLocate) })
			b.Run("readat", func(b *testing.B) { benchRead(b, l, starts, readPread) })
			b.Run("readall", func(b *testing.B) { benchRead(b, l, starts, readCopyAll) })
		})
	}
}

type readMode int

const (
	readLocate readMode = iota
	readPread
	readCopyAll
)

// buildReadLog appends readLogBytes of sz batches, flushes, and returns the
// offsets a sequential consumer would fetch from: each fetch resumes after
// the last whole batch of the previous one, as clients do with a partial
// batch at the end of a response.
func buildReadLog(b *testing.B, sz benchSize) (*Log, []int64) {
	b.Helper()
	l := openBenchLog(b, filepath.Join(b.TempDir(), "topic-0"), vfs.OS)
	batch := benchBatch(b, sz)
	for range readLogBytes / len(batch) {
		if _, err := l.AppendAsLeader(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	var starts []int64
	for off := int64(0); off < l.LogEndOffset(); {
		starts = append(starts, off)
		rr, err := l.Read(off, readMaxBytes, -1, true)
		if err != nil {
			b.Fatal(err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			b.Fatal(err)
		}
		h, err := record.ParseHeader(lastWhole(data))
		if err != nil {
			b.Fatal(err)
		}
		off = h.NextOffset()
	}
	return l, starts
}

func benchRead(b *testing.B, l *Log, starts []int64, mode readMode) {
	b.SetBytes(l.Offsets().Size / int64(len(starts)))
	b.ReportAllocs()
	buf := make([]byte, readMaxBytes)
	b.ResetTimer()
	for i := range b.N {
		rr, err := l.Read(starts[i%len(starts)], readMaxBytes, -1, true)
		if err != nil {
			b.Fatal(err)
		}
		switch mode {
		case readPread:
			_, err = rr.File.ReadAt(buf[:rr.Size], rr.Position)
		case readCopyAll:
			_, err = rr.ReadAll()
		}
		rr.Release()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// recoveryLogBytes is the size of the log BenchmarkRecovery1GiB recovers:
// one full segment at the default segment.bytes.
const recoveryLogBytes = 1 << 30

// BenchmarkRecovery1GiB times Open of a 1 GiB log (one default-sized
// segment) in three states:
//
//   - unclean: log.checkpoint removed, as after a crash before the first
//     checkpoint, so every batch is read, CRC-checked and re-indexed; the
//     files are in the page cache (a process crash).
//   - unclean-cold: the same after evicting the log's files from the page
//     cache with fadvise (a machine crash; a VM's host may still cache).
//   - clean: after Close, which only loads the indexes and scans the tail
//     past the last offset index entry.
//
// It writes 1 GiB per batch size and per -count, so it runs only with
// SAMSA_BENCH_BIG=1.
func BenchmarkRecovery1GiB(b *testing.B) {
	if os.Getenv("SAMSA_BENCH_BIG") != "1" {
		b.Skip("writes 1 GiB per batch size; set SAMSA_BENCH_BIG=1 to run")
	}
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "topic-0")
			end, size := buildRecoveryLog(b, dir, sz)
			b.Run("unclean", func(b *testing.B) { benchOpen(b, dir, end, size, false, false) })
			b.Run("unclean-cold", func(b *testing.B) { benchOpen(b, dir, end, size, false, true) })
			b.Run("clean", func(b *testing.B) { benchOpen(b, dir, end, size, true, false) })
		})
	}
}

// buildRecoveryLog fills one segment with sz batches and closes the log
// cleanly; it returns the log end offset and size.
func buildRecoveryLog(b *testing.B, dir string, sz benchSize) (int64, int64) {
	b.Helper()
	l := openBenchLog(b, dir, vfs.OS)
	batch := benchBatch(b, sz)
	for range recoveryLogBytes / len(batch) {
		if _, err := l.AppendAsLeader(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	o := l.Offsets()
	if o.Segments != 1 {
		b.Fatalf("%d segments, want 1", o.Segments)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return o.LogEndOffset, o.Size
}

func benchOpen(b *testing.B, dir string, end, size int64, clean, cold bool) {
	// A clean open reads the indexes, not the log, so MB/s of log would
	// only restate ns/op.
	if !clean {
		b.SetBytes(size)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if !clean {
			if err := os.Remove(filepath.Join(dir, checkpointFile)); err != nil {
				b.Fatal(err)
			}
		}
		if cold {
			evictDir(b, dir)
		}
		b.StartTimer()
		l := openBenchLog(b, dir, vfs.OS)
		b.StopTimer()
		if got := l.LogEndOffset(); got != end {
			b.Fatalf("log end %d after open, want %d", got, end)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// evictDir drops dir's files from the page cache. Only clean pages go, so
// it syncs each file first; Close already did, this is cheap insurance.
func evictDir(b *testing.B, dir string) {
	b.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		err = f.Sync()
		if err == nil {
			err = fadviseDontNeed(f)
		}
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}

func fadviseDontNeed(f *os.File) error {
	const posixFadvDontNeed = 4
	_, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, posixFadvDontNeed, 0, 0)
	if errno != 0 {
		return &os.PathError{Op: "fadvise", Path: f.Name(), Err: errno}
	}
	return nil
}

// BenchmarkRawDisk measures the machine without the log, as the yardstick
// for the benchmarks above:
//
//   - write: os.File.Write of one chunk to the end of a file (page cache).
//     A chunk is as long as the benchmark batch of that size, not a round
//     1 KiB or 64 KiB: page-aligned writes are markedly cheaper (about 1.5x
//     at 64 KiB on Linux 6.18/ext4), and batches are never aligned.
//   - write-fdatasync: the same, then fdatasync, one chunk at a time: the
//     most durable appends per second a single writer can get.
//   - fdatasync-unchanged: fdatasync of a file with nothing new to write,
//     which is what a flush pays for an index file that did not change.
//   - read: pread of 1 MiB chunks, in order, from a cached 256 MiB file
//     written in batch-sized appends. How the file was written matters:
//     one written 1 KiB at a time reads back about 1.5x slower than one
//     written 64 KiB at a time (Linux 6.18/ext4; likely smaller page-cache
//     folios), so each read benchmark has its own yardstick.
func BenchmarkRawDisk(b *testing.B) {
	for _, sz := range benchSizes {
		size := len(benchBatch(b, sz))
		b.Run("write/"+sz.name, func(b *testing.B) { benchRawWrite(b, size, false) })
		b.Run("write-fdatasync/"+sz.name, func(b *testing.B) { benchRawWrite(b, size, true) })
		b.Run("read/"+sz.name, func(b *testing.B) { benchRawRead(b, size) })
	}
	b.Run("fdatasync-unchanged", benchRawSyncUnchanged)
}

func benchRawWrite(b *testing.B, size int, durable bool) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
		if durable {
			if err := fdatasyncRetry(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
}

func benchRawSyncUnchanged(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		b.Fatal(err)
	}
	if err := fdatasyncRetry(f); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := fdatasyncRetry(f); err != nil {
			b.Fatal(err)
		}
	}
}

func fdatasyncRetry(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func benchRawRead(b *testing.B, chunk int) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, max(chunk, readMaxBytes))
	for i := range buf {
		buf[i] = byte(i)
	}
	for range readLogBytes / chunk {
		if _, err := f.Write(buf[:chunk]); err != nil {
			b.Fatal(err)
		}
	}
	if err := fdatasyncRetry(f); err != nil {
		b.Fatal(err)
	}
	// The file ends short of readLogBytes by less than a chunk; stay
	// within whole megabytes.
	reads := readLogBytes / chunk * chunk / readMaxBytes
	b.SetBytes(readMaxBytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.ReadAt(buf[:readMaxBytes], int64(i%reads)*readMaxBytes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOffsetForTimestamp is one ListOffsets-by-timestamp lookup that
// the time index answers at a segment's first batch, as most lookups over
// many partitions do: what it costs is the read it makes. Each 16 KiB-batch
// partition of the console's 1,000-partition topic paid a 1 MiB read here
// (and a 1 MiB buffer to clear) until a reader's first read was made small.
func BenchmarkOffsetForTimestamp(b *testing.B) {
	l := openBenchLog(b, filepath.Join(b.TempDir(), "topic-0"), vfs.OS)
	defer l.Close()
	batch := benchBatch(b, benchSize{"16KiB", 100, 16 << 10})
	for range (8 << 20) / len(batch) {
		if _, err := l.AppendAsLeader(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if off, _, found, err := l.OffsetForTimestamp(benchTimestamp); err != nil || !found || off != 0 {
			b.Fatalf("lookup: %d %v %v", off, found, err)
		}
	}
}
