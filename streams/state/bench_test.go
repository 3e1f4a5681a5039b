package state

import (
	"encoding/binary"
	"testing"
)

// The benchmarks commit every benchCommitEvery writes, as the runtime
// commits every commit.interval.ms, so pebble's batches stay realistic.
const benchCommitEvery = 1000

func benchKey(i int) []byte {
	return binary.BigEndian.AppendUint64([]byte("key-"), uint64(i)*2654435761%1_000_003)
}

var benchValue = make([]byte, 100)

func BenchmarkKeyValuePut(b *testing.B) {
	for name, open := range kvVariants(b) {
		b.Run(name, func(b *testing.B) {
			s := open()
			defer s.Close()
			b.ReportAllocs()
			b.SetBytes(int64(len(benchValue)))
			for i := 0; b.Loop(); i++ {
				if err := s.Put(benchKey(i), benchValue); err != nil {
					b.Fatal(err)
				}
				if i%benchCommitEvery == benchCommitEvery-1 {
					must(b, s.Commit())
				}
			}
		})
	}
}

// BenchmarkKeyValueGet reads committed keys (pebble: from its memtable and
// tables through the block cache).
func BenchmarkKeyValueGet(b *testing.B) {
	const keys = 100_000
	for name, open := range kvVariants(b) {
		b.Run(name, func(b *testing.B) {
			s := open()
			defer s.Close()
			for i := range keys {
				must(b, s.Put(benchKey(i), benchValue))
			}
			must(b, s.Commit())
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v, err := s.Get(benchKey(i % keys))
				if err != nil || v == nil {
					b.Fatal(err, v)
				}
			}
		})
	}
}

// BenchmarkWindowPut is a windowed aggregation's write: a key per record,
// window starts moving forward, retention expiring segments.
func BenchmarkWindowPut(b *testing.B) {
	o := WindowOptions{RetentionPeriod: 60_000, WindowSize: 1000}
	for name, open := range windowVariants(b, o) {
		b.Run(name, func(b *testing.B) {
			s := open()
			defer s.Close()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := s.Put(benchKey(i%10_000), benchValue, int64(i/10)/1000*1000); err != nil {
					b.Fatal(err)
				}
				if i%benchCommitEvery == benchCommitEvery-1 {
					must(b, s.Commit())
				}
			}
		})
	}
}

// BenchmarkCachingKeyValuePut: writes deduplicated in the cache, flushed
// to a pebble store at each commit.
func BenchmarkCachingKeyValuePut(b *testing.B) {
	s, err := OpenPebbleKeyValueStore("kv", b.TempDir(), PebbleOptions{})
	must(b, err)
	cache, err := NewCache(10 << 20)
	must(b, err)
	c, err := NewCachingKeyValueStore(s, cache, "0_0-kv", &RecordContext{}, func(_, _, _ []byte, _ int64) {})
	must(b, err)
	defer c.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := c.Put(benchKey(i%10_000), benchValue); err != nil {
			b.Fatal(err)
		}
		if i%benchCommitEvery == benchCommitEvery-1 {
			must(b, c.Commit())
		}
	}
}

// BenchmarkPebbleCommit is one commit of 100 writes: the WAL fsync is the
// cost the runtime pays per store per commit interval.
func BenchmarkPebbleCommit(b *testing.B) {
	s, err := OpenPebbleKeyValueStore("kv", b.TempDir(), PebbleOptions{})
	must(b, err)
	defer s.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range 100 {
			must(b, s.Put(benchKey(i*100+j), benchValue))
		}
		must(b, s.Commit())
	}
}

// BenchmarkRestore applies changelog batches of 1,000 records and commits
// each, as a restore does per poll.
func BenchmarkRestore(b *testing.B) {
	for name, open := range kvVariants(b) {
		b.Run(name, func(b *testing.B) {
			s := LogKeyValueStore(open(), &RecordContext{}, nil)
			defer s.Close()
			batch := make([]ChangelogRecord, 1000)
			b.ReportAllocs()
			b.SetBytes(int64(len(batch) * len(benchValue)))
			for i := 0; b.Loop(); i++ {
				for j := range batch {
					batch[j] = ChangelogRecord{Key: benchKey(i*len(batch) + j), Value: benchValue}
				}
				must(b, s.RestoreBatch(batch))
				must(b, s.Commit())
			}
		})
	}
}
