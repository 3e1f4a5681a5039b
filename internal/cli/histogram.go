package cli

import (
	"math"
	"math/bits"
	"time"
)

// histogram records durations in log-linear buckets: exact below 64ns, then
// 64 buckets per power of two, so a reported quantile is within 1/64 (1.6%)
// of the true value. Recording is a few instructions and never allocates;
// the whole range of int64 nanoseconds fits in a fixed array. Not safe for
// concurrent use.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    float64
	min    int64
	max    int64
}

const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histBuckets = (64 - histSubBits) * histSub
)

func histIndex(v int64) int {
	if v < histSub {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - histSubBits - 1
	return (e+1)*histSub + int(uint64(v)>>e) - histSub
}

// histBounds is the inclusive range of values that land in bucket i.
func histBounds(i int) (lo, hi int64) {
	if i < histSub {
		return int64(i), int64(i)
	}
	e := i/histSub - 1
	m := int64(i%histSub + histSub)
	return m << e, (m+1)<<e - 1
}

func (h *histogram) record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.counts[histIndex(v)]++
	h.n++
	h.sum += float64(v)
}

// quantile returns the value at q in [0, 1]: the middle of the bucket that
// holds the sample of that rank, clamped to the observed min and max; the
// top rank is the exact max.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	if rank == h.n {
		return time.Duration(h.max)
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := histBounds(i)
			mid := lo + (hi-lo)/2
			return time.Duration(min(max(mid, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

// latencySummary is the JSON and table form of a histogram, in milliseconds.
type latencySummary struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	// Percentiles holds the values at --percentiles, for plotting a
	// percentile curve; absent unless asked for.
	Percentiles []percentileValue `json:"percentiles,omitempty"`
}

// percentileValue is the latency at percentile P (0 < P <= 100).
type percentileValue struct {
	P  float64 `json:"p"`
	MS float64 `json:"ms"`
}

// summary reports the fixed quantiles and, in addition, the value at each of
// percentiles (in percent).
func (h *histogram) summary(percentiles ...float64) *latencySummary {
	if h.n == 0 {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s := &latencySummary{
		Mean: h.sum / float64(h.n) / float64(time.Millisecond),
		P50:  ms(h.quantile(0.50)),
		P95:  ms(h.quantile(0.95)),
		P99:  ms(h.quantile(0.99)),
		P999: ms(h.quantile(0.999)),
		Max:  ms(time.Duration(h.max)),
	}
	for _, p := range percentiles {
		s.Percentiles = append(s.Percentiles, percentileValue{P: p, MS: ms(h.quantile(p / 100))})
	}
	return s
}
