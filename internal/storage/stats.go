package storage

import (
	"sync/atomic"
	"time"
)

// Stats are what a Manager's logs count of their own work, for the
// broker's metrics: how long each flush took (Kafka's
// LogFlushRateAndTimeMs). The storage layer keeps no metrics library; it
// counts into atomics in fixed arrays, which a flush updates without a
// lock or an allocation, and the broker reads snapshots when scraped.
// Safe for concurrent use.
type Stats struct {
	flush flushHistogram
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
