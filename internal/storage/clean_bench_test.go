//go:build linux && (amd64 || arm64)

// Same constraint as bench_test.go, whose evictDir this file uses for the
// cold-cache variant.

package storage

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// BenchmarkClean times one full cleaning pass, (*Log).Clean, over a
// compacted log on the real filesystem in which every key was written many
// times, so the pass drops most records. One op is one pass over the whole
// log; ns/op is its wall time.
//
// The log's shape is set by environment variables so that `go test -bench .`
// stays quick while the same code can clean a Kafka-sized log:
//
//	SAMSA_CLEAN_BENCH_MB          log size on disk, MiB            (64)
//	SAMSA_CLEAN_BENCH_KEYS        distinct keys                    (65536)
//	SAMSA_CLEAN_BENCH_SEGMENT_MB  segment.bytes, MiB               (64)
//	SAMSA_CLEAN_BENCH_MAP_MB      CleanOptions.MapMemory, MiB      (128)
//	SAMSA_CLEAN_BENCH_COLD        1: evict the log from the page cache before each pass
//
// The full run is
//
//	SAMSA_CLEAN_BENCH_MB=1024 SAMSA_CLEAN_BENCH_KEYS=1000000 \
//	  go test -run '^$' -bench BenchmarkClean -benchtime 1x ./internal/storage/
//
// The log: batches of 100 records (as a producer's linger fills them), each
// record a key drawn uniformly at random from the key set (so each key is
// updated size/(keys*~170 B) times on average) and a 100-200 byte value of
// random hex digits (about 2:1 compressible). codec=none writes them
// uncompressed, codec=zstd compressed; the size is bytes on disk in both,
// so zstd's log holds about twice the records. segment.bytes defaults to
// 64 MiB rather than Kafka's 1 GiB so that a 1 GiB log is 16 segments and
// the pass pays the per-segment costs (fsyncs, swap, index rebuild) as a
// real log of that size would; Kafka's default fits the whole log in one
// segment (SAMSA_CLEAN_BENCH_SEGMENT_MB=1024). The generated log ends with
// a roll, so its active segment is empty and the pass cleans everything.
//
// The log is generated once per sub-benchmark (not timed; gen-s says how
// long it took) and each op cleans a fresh copy of it: a pass rewrites the
// log in place, and a second pass over an already cleaned log would measure
// something else. Copying rather than re-appending gives every pass the same
// bytes on disk, and lets the page cache be put in a known state: the copy
// is fsynced (so no writeback of it competes with the pass) and then either
// read once (warm, the default: the segments are cached, as on a broker
// with memory to spare) or evicted with fadvise (cold).
//
// Metrics, per pass:
//
//	MB/s           CleanStats.BytesRead (10^6 B) / pass time
//	records/s      records in the cleaned segments / pass time
//	read-MB        CleanStats.BytesRead
//	written-MB     CleanStats.BytesWritten
//	removed-%      CleanStats.RecordsRemoved / records in
//	peak-heap-MiB  peak of /memory/classes/heap/objects:bytes during the pass,
//	               sampled every 2 ms, minus its value just before (after a GC);
//	               includes garbage not yet collected and the offset map
//	map-MiB        CleanOptions.MapMemory, the budget (the cleaner may allocate less)
//	cpu-s          user+system CPU time of the process during the pass (all
//	               goroutines, GC included); well below the wall time means
//	               the pass waited (fsync, reads, or the host's steal)
//	gen-s          time to generate the log (once, not timed)
func BenchmarkClean(b *testing.B) {
	p := cleanBenchParams{
		logBytes:     int64(envInt(b, "SAMSA_CLEAN_BENCH_MB", 64)) << 20,
		keys:         envInt(b, "SAMSA_CLEAN_BENCH_KEYS", 1<<16),
		segmentBytes: int64(envInt(b, "SAMSA_CLEAN_BENCH_SEGMENT_MB", 64)) << 20,
		mapMemory:    envInt(b, "SAMSA_CLEAN_BENCH_MAP_MB", 128) << 20,
		cold:         os.Getenv("SAMSA_CLEAN_BENCH_COLD") == "1",
	}
	// 1M keys need 1e6 / 0.9 * 24 B = 25.4 MiB of map; Kafka's default
	// dedupe buffer (128 MiB, one cleaner thread) holds 5.03M keys.
	if need := int(float64(p.keys)/defaultOffsetMapLoadFactor+1) * offsetMapEntrySize; p.mapMemory < need {
		b.Logf("MapMemory %d MiB < %d MiB needed for %d keys: a pass will clean only part of the log", p.mapMemory>>20, need>>20, p.keys)
	}
	for _, codec := range []record.Codec{record.CodecNone, record.CodecZstd} {
		b.Run("codec="+codec.String(), func(b *testing.B) {
			// Generated on the first call only: the framework calls this
			// function again with a larger b.N unless -benchtime is Nx.
			src := &cleanBenchLog{params: p, codec: codec, dir: filepath.Join(b.TempDir(), "src")}
			b.Run(fmt.Sprintf("size=%dMiB/keys=%d", p.logBytes>>20, p.keys), func(b *testing.B) {
				benchClean(b, src)
			})
		})
	}
}

type cleanBenchParams struct {
	logBytes     int64
	keys         int
	segmentBytes int64
	mapMemory    int
	cold         bool
}

// cleanBenchLog is a generated log, kept closed in dir and copied for each
// pass.
type cleanBenchLog struct {
	params cleanBenchParams
	codec  record.Codec
	dir    string

	once      sync.Once
	err       error
	genTime   time.Duration
	size      int64 // bytes in all segments
	records   int64 // records appended
	liveKeys  int64 // distinct keys appended: the records a full pass keeps
	lastTs    int64
	segments  int
	batchSize int64 // mean encoded batch
}

const (
	cleanBenchBatchRecords = 100
	cleanBenchValueMin     = 100
	cleanBenchValueMax     = 200
)

func (g *cleanBenchLog) config() Config {
	cfg := DefaultConfig()
	cfg.Compacted = true
	cfg.Deletes = false
	cfg.RetentionMs = -1
	cfg.SegmentBytes = g.params.segmentBytes
	cfg.SegmentMs = math.MaxInt64 // roll on size only
	return cfg
}

func (g *cleanBenchLog) open(dir string) (*Log, error) {
	return Open(dir, g.config(), Options{FS: vfs.OS, Logger: slog.New(slog.DiscardHandler)})
}

// generate appends batches of random key updates until the log holds
// logBytes, rolls so every segment is cleanable, and closes the log.
func (g *cleanBenchLog) generate() error {
	start := time.Now()
	l, err := g.open(g.dir)
	if err != nil {
		return err
	}
	defer l.Close()

	rng := rand.New(rand.NewPCG(1, 2))
	// Values are slices of a pool of random hex digits (4 bits of entropy
	// a byte), at random offsets: compressible like text, and not so
	// repetitive within a batch that zstd finds whole records again.
	pool := make([]byte, 4<<20)
	for i := range pool {
		pool[i] = "0123456789abcdef"[rng.IntN(16)]
	}
	seen := make([]bool, g.params.keys)
	recs := make([]record.Record, cleanBenchBatchRecords)
	// Keys are formatted into one buffer per batch, large enough never to
	// reallocate under the slices taken from it.
	keyBuf := make([]byte, 0, cleanBenchBatchRecords*32)
	ts := epoch0.UnixMilli()
	var batch []byte
	var appended, batches int64
	for appended < g.params.logBytes {
		keyBuf = keyBuf[:0]
		for i := range recs {
			k := rng.IntN(g.params.keys)
			if !seen[k] {
				seen[k] = true
				g.liveKeys++
			}
			n := len(keyBuf)
			keyBuf = append(keyBuf, "key-"...)
			keyBuf = strconv.AppendInt(keyBuf, int64(k), 10)
			vlen := cleanBenchValueMin + rng.IntN(cleanBenchValueMax-cleanBenchValueMin+1)
			off := rng.IntN(len(pool) - vlen)
			recs[i] = record.Record{Offset: int64(i), Timestamp: ts, Key: keyBuf[n:len(keyBuf):len(keyBuf)], Value: pool[off : off+vlen]}
			ts++
		}
		rb := record.Batch{Codec: g.codec, ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence, Records: recs}
		if batch, err = rb.AppendTo(batch[:0]); err != nil {
			return err
		}
		if _, err := l.AppendAsLeader(batch, 0); err != nil {
			return err
		}
		appended += int64(len(batch))
		batches++
		g.records += cleanBenchBatchRecords
	}
	// The active segment is never cleaned: start an empty one.
	if err := l.Roll(); err != nil {
		return err
	}
	o := l.Offsets()
	g.size, g.segments, g.lastTs = o.Size, o.Segments, ts
	g.batchSize = appended / batches
	if err := l.Close(); err != nil {
		return err
	}
	g.genTime = time.Since(start)
	return nil
}

func benchClean(b *testing.B, g *cleanBenchLog) {
	g.once.Do(func() { g.err = g.generate() })
	if g.err != nil {
		b.Fatal(g.err)
	}
	b.Logf("generated %.1f MiB in %d segments (%d cleanable), %d records in %d-byte batches, %d of %d keys used, in %v",
		float64(g.size)/(1<<20), g.segments, g.segments-1, g.records, g.batchSize, g.liveKeys, g.params.keys, g.genTime.Round(time.Millisecond))

	work := b.TempDir()
	sampler := newHeapSampler(2 * time.Millisecond)
	var (
		read, written, removed, recordsIn int64
		peak                              uint64
		elapsed, cpu                      time.Duration
	)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		dir := filepath.Join(work, "pass-"+strconv.Itoa(i))
		l := g.prepareCopy(b, dir)
		runtime.GC()
		sampler.start()
		cpu0 := processCPU(b)
		t0 := time.Now()
		b.StartTimer()

		stats, err := l.Clean(CleanOptions{MapMemory: g.params.mapMemory, NowMs: g.lastTs + 1})

		b.StopTimer()
		d := time.Since(t0)
		c := processCPU(b) - cpu0
		pk := sampler.stop()
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		// Records the pass read: all of them when it left one record per
		// key; a pass that stopped early (a full offset map) is prorated
		// by bytes.
		in := g.records
		if kept := g.records - stats.RecordsRemoved; kept != g.liveKeys {
			if stats.BytesRead >= g.size {
				b.Errorf("pass %d read the whole log but kept %d records, want one per key used, %d", i, kept, g.liveKeys)
			}
			in = int64(float64(g.records) * float64(stats.BytesRead) / float64(g.size))
			b.Logf("pass %d kept %d records for %d keys, read %d of %d bytes (%d segments cleaned): a partial pass", i, kept, g.liveKeys, stats.BytesRead, g.size, stats.SegmentsCleaned)
		}
		b.Logf("pass %d: %v (CPU %v), %.1f MB/s, %.0f records/s, read %d B, wrote %d B, removed %d records, peak heap +%.1f MiB",
			i, d.Round(time.Millisecond), c.Round(time.Millisecond), float64(stats.BytesRead)/1e6/d.Seconds(), float64(in)/d.Seconds(),
			stats.BytesRead, stats.BytesWritten, stats.RecordsRemoved, float64(pk)/(1<<20))
		read += stats.BytesRead
		written += stats.BytesWritten
		removed += stats.RecordsRemoved
		recordsIn += in
		peak = max(peak, pk)
		elapsed += d
		cpu += c
		b.StartTimer()
	}
	b.StopTimer()

	n, secs := float64(b.N), elapsed.Seconds()
	b.ReportMetric(float64(read)/1e6/secs, "MB/s")
	b.ReportMetric(float64(recordsIn)/secs, "records/s")
	b.ReportMetric(float64(read)/1e6/n, "read-MB")
	b.ReportMetric(float64(written)/1e6/n, "written-MB")
	b.ReportMetric(100*float64(removed)/float64(recordsIn), "removed-%")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(g.params.mapMemory)/(1<<20), "map-MiB")
	b.ReportMetric(cpu.Seconds()/n, "cpu-s")
	b.ReportMetric(g.genTime.Seconds(), "gen-s")
}

// processCPU is the user and system time the process has used: beside the
// wall time of a pass, it tells CPU work from waiting (fsync, disk reads,
// or a busy host's steal).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// prepareCopy copies the generated log into dir, fsyncs it, puts it in the
// page cache state the run asks for and opens it.
func (g *cleanBenchLog) prepareCopy(b *testing.B, dir string) *Log {
	b.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	ents, err := os.ReadDir(g.dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFileSync(filepath.Join(g.dir, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			b.Fatal(err)
		}
	}
	if err := vfs.OS.SyncDir(dir); err != nil {
		b.Fatal(err)
	}
	if g.params.cold {
		evictDir(b, dir)
	} else {
		warmDir(b, dir)
	}
	l, err := g.open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func copyFileSync(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// warmDir reads every file in dir once, so the pass finds it in the page
// cache whatever the copy left there.
func warmDir(b *testing.B, dir string) {
	b.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// heapSampler records the peak of the Go heap's object bytes while it runs,
// relative to the value when it started. runtime/metrics.Read does not stop
// the world (runtime.ReadMemStats does), so sampling every few ms barely
// disturbs the pass.
type heapSampler struct {
	every time.Duration
	done  chan struct{}
	res   chan uint64
	base  uint64
}

const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

func newHeapSampler(every time.Duration) *heapSampler {
	return &heapSampler{every: every}
}

func readHeapObjects(s []metrics.Sample) uint64 {
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func (h *heapSampler) start() {
	s := []metrics.Sample{{Name: heapObjectsMetric}}
	h.base = readHeapObjects(s)
	h.done, h.res = make(chan struct{}), make(chan uint64, 1)
	go func() {
		t := time.NewTicker(h.every)
		defer t.Stop()
		peak := h.base
		for {
			select {
			case <-t.C:
				peak = max(peak, readHeapObjects(s))
			case <-h.done:
				h.res <- max(peak, readHeapObjects(s))
				return
			}
		}
	}()
}

// stop ends the sampling and returns the peak above the starting value.
func (h *heapSampler) stop() uint64 {
	close(h.done)
	return <-h.res - h.base
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return v
}
