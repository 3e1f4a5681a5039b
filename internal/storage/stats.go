package storage

import (
	"sync"
	"sync/atomic"
	"time"
)

// Stats are what a Manager's logs count of their own work, for the
// broker's metrics: how long each flush took (Kafka's
// LogFlushRateAndTimeMs) and what the log cleaner did (Kafka's LogCleaner
// and LogCleanerManager metrics). The storage layer keeps no metrics
// library; a flush counts into atomics in fixed arrays, without a lock or
// an allocation, the cleaner under a lock of its own once per pass, and
// the broker reads snapshots when scraped. Safe for concurrent use.
type Stats struct {
	flush   flushHistogram
	cleaner struct {
		sync.Mutex
		p CleanerProgress
	}
}

// CleanerProgress is what the Manager's log cleaner did since it started.
type CleanerProgress struct {
	// Rounds counts the cleaner's rounds (each measures every compacted
	// log and cleans the due ones), LastRound is when the last one ended
	// (zero before the first).
	Rounds    int64
	LastRound time.Time
	// Passes counts the cleaning passes that ended well, one log each;
	// FailedPasses those that failed (the log is tried again next round).
	Passes, FailedPasses int64
	// What the passes did, in all: the bytes of the segments read and of
	// their cleaned replacements, the records removed, the time taken.
	BytesRead, BytesWritten, RecordsRemoved int64
	PassTime                                time.Duration
	// LastPassTime and LastBufferUtilization are the last pass's
	// (CleanStats.BufferUtilization).
	LastPassTime          time.Duration
	LastBufferUtilization float64
	// Of the last round: the largest dirty ratio of the compacted logs,
	// the largest compaction delay (Cleanability.CompactionDelayMs), and
	// how many logs' passes failed.
	MaxDirtyRatio      float64
	MaxCompactionDelay time.Duration
	Uncleanable        int
}

// Cleaner reads the cleaner's progress.
func (s *Stats) Cleaner() CleanerProgress {
	s.cleaner.Lock()
	defer s.cleaner.Unlock()
	return s.cleaner.p
}

// cleanerPass counts a pass that took d and ended with err.
func (s *Stats) cleanerPass(cs CleanStats, d time.Duration, err error) {
	s.cleaner.Lock()
	defer s.cleaner.Unlock()
	p := &s.cleaner.p
	if err != nil {
		p.FailedPasses++
		return
	}
	p.Passes++
	p.BytesRead += cs.BytesRead
	p.BytesWritten += cs.BytesWritten
	p.RecordsRemoved += cs.RecordsRemoved
	p.PassTime += d
	p.LastPassTime, p.LastBufferUtilization = d, cs.BufferUtilization
}

// cleanerRound counts a round that ended at end.
func (s *Stats) cleanerRound(end time.Time, maxDirtyRatio float64, maxDelay time.Duration, uncleanable int) {
	s.cleaner.Lock()
	defer s.cleaner.Unlock()
	p := &s.cleaner.p
	p.Rounds++
	p.LastRound = end
	p.MaxDirtyRatio, p.MaxCompactionDelay, p.Uncleanable = maxDirtyRatio, maxDelay, uncleanable
}

// FlushBuckets are the upper bounds, in seconds, of the flush time
// histogram: from a page-cache-only fsync of a few microseconds' work to
// a disk that stalls for seconds.
var FlushBuckets = [...]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// flushHistogram counts flushes by duration: counts[i] those that took at
// most FlushBuckets[i] and more than the bound before it, the last one
// those past every bound.
type flushHistogram struct {
	counts   [len(FlushBuckets) + 1]atomic.Uint64
	sumNanos atomic.Uint64
}

func (h *flushHistogram) observe(d time.Duration) {
	d = max(d, 0)
	s := d.Seconds()
	i := 0
	for i < len(FlushBuckets) && s > FlushBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNanos.Add(uint64(d))
}

// FlushTimes is a snapshot of the flush times: Count flushes took Seconds
// in all, and Buckets[i] of them took at most FlushBuckets[i]
// (cumulative, as Prometheus' histograms count).
type FlushTimes struct {
	Count   uint64
	Seconds float64
	Buckets [len(FlushBuckets)]uint64
}

// FlushTimes reads the flush time histogram. The count is the buckets'
// total, so the two agree even while flushes run.
func (s *Stats) FlushTimes() FlushTimes {
	var t FlushTimes
	for i := range s.flush.counts {
		t.Count += s.flush.counts[i].Load()
		if i < len(t.Buckets) {
			t.Buckets[i] = t.Count
		}
	}
	t.Seconds = float64(s.flush.sumNanos.Load()) / 1e9
	return t
}
