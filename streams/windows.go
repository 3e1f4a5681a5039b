package streams

import (
	"fmt"
	"time"

	"github.com/samsa-io/samsa/streams/serde"
)

// Window is a window's bounds in milliseconds: [Start, End) for time
// windows, [Start, End] for sliding windows and sessions, as Kafka's.
type Window = serde.Window

// Windowed is a key with the window it was aggregated in (Kafka's
// Windowed<K>), the key type of a windowed aggregation's table.
type Windowed[K any] = serde.Windowed[K]

// TimeWindows are fixed-size windows (Kafka's TimeWindows): tumbling when
// they advance by their size, hopping when AdvanceBy makes them overlap.
// A record belongs to every window whose [start, end) holds its
// timestamp; windows are aligned to the epoch.
type TimeWindows struct {
	size, advance, grace int64
	err                  error
}

// OfSizeWithNoGrace makes tumbling windows of size with no grace period:
// a record later than its window's end (in stream time) is dropped.
func OfSizeWithNoGrace(size time.Duration) TimeWindows {
	return OfSizeAndGrace(size, 0)
}

// OfSizeAndGrace makes tumbling windows of size that accept out-of-order
// records until grace has passed after the window's end (in stream time).
func OfSizeAndGrace(size, grace time.Duration) TimeWindows {
	return newTimeWindows(size.Milliseconds(), size.Milliseconds(), grace.Milliseconds())
}

// AdvanceBy makes the windows hop: a new window starts every advance, so a
// record lands in size/advance windows (Kafka's hopping windows).
func (w TimeWindows) AdvanceBy(advance time.Duration) TimeWindows {
	if w.err != nil {
		return w
	}
	return newTimeWindows(w.size, advance.Milliseconds(), w.grace)
}

func newTimeWindows(size, advance, grace int64) TimeWindows {
	w := TimeWindows{size: size, advance: advance, grace: grace}
	switch {
	case size <= 0:
		w.err = fmt.Errorf("streams: window size must be larger than zero, got %d ms", size)
	case advance <= 0 || advance > size:
		w.err = fmt.Errorf("streams: window advancement interval should be more than zero and less than window duration which is %d ms, but given advancement interval is: %d ms", size, advance)
	case grace < 0:
		w.err = fmt.Errorf("streams: grace period must not be negative, got %d ms", grace)
	}
	return w
}

// Size is the windows' size in milliseconds.
func (w TimeWindows) Size() int64 { return w.size }

// Advance is how far apart windows start, in milliseconds.
func (w TimeWindows) Advance() int64 { return w.advance }

// GracePeriod is how long after its end a window still takes records, in
// milliseconds.
func (w TimeWindows) GracePeriod() int64 { return w.grace }

// windowsFor lists the windows holding ts, by ascending start (Kafka's
// TimeWindows.windowsFor: no window starts before the epoch).
func (w TimeWindows) windowsFor(ts int64) []Window {
	start := max(0, ts-w.size+w.advance) / w.advance * w.advance
	var out []Window
	for ; start <= ts; start += w.advance {
		out = append(out, Window{Start: start, End: start + w.size})
	}
	return out
}

// SlidingWindows are windows of a fixed time difference that slide with
// the records (Kafka's SlidingWindows, KIP-450): every window [start, end]
// (bounds included) that holds a distinct set of records exists, so each
// record makes at most two new windows: the one ending at it (its left
// window) and the one starting just after it (its right window).
type SlidingWindows struct {
	timeDifference, grace int64
	err                   error
}

// OfTimeDifferenceWithNoGrace makes sliding windows with no grace period.
func OfTimeDifferenceWithNoGrace(timeDifference time.Duration) SlidingWindows {
	return OfTimeDifferenceAndGrace(timeDifference, 0)
}

// OfTimeDifferenceAndGrace makes sliding windows holding records at most
// timeDifference apart, taking out-of-order records for grace after a
// window's end.
func OfTimeDifferenceAndGrace(timeDifference, grace time.Duration) SlidingWindows {
	w := SlidingWindows{timeDifference: timeDifference.Milliseconds(), grace: grace.Milliseconds()}
	switch {
	case w.timeDifference < 0:
		w.err = fmt.Errorf("streams: window time difference must not be negative, got %d ms", w.timeDifference)
	case w.grace < 0:
		w.err = fmt.Errorf("streams: window grace period must not be negative, got %d ms", w.grace)
	}
	return w
}

// TimeDifference is the windows' size in milliseconds.
func (w SlidingWindows) TimeDifference() int64 { return w.timeDifference }

// GracePeriod is how long after its end a window still takes records.
func (w SlidingWindows) GracePeriod() int64 { return w.grace }

// SessionWindows group a key's records into sessions separated by
// inactivity gaps (Kafka's SessionWindows): a record within the gap of a
// session joins it, and a record bridging two sessions merges them.
type SessionWindows struct {
	gap, grace int64
	err        error
}

// OfInactivityGapWithNoGrace makes session windows with no grace period.
func OfInactivityGapWithNoGrace(gap time.Duration) SessionWindows {
	return OfInactivityGapAndGrace(gap, 0)
}

// OfInactivityGapAndGrace makes session windows that close gap+grace after
// their last record (in stream time).
func OfInactivityGapAndGrace(gap, grace time.Duration) SessionWindows {
	w := SessionWindows{gap: gap.Milliseconds(), grace: grace.Milliseconds()}
	switch {
	case w.gap <= 0:
		w.err = fmt.Errorf("streams: session inactivity gap cannot be zero or negative, got %d ms", w.gap)
	case w.grace < 0:
		w.err = fmt.Errorf("streams: grace period must not be negative, got %d ms", w.grace)
	}
	return w
}

// InactivityGap is the sessions' gap in milliseconds.
func (w SessionWindows) InactivityGap() int64 { return w.gap }

// GracePeriod is how long after gap a session still takes records.
func (w SessionWindows) GracePeriod() int64 { return w.grace }

// windowedTable is what a windowed aggregation's table tells the nodes
// below it (Kafka finds it by walking the graph, GraphGraceSearchUtil):
// when a window closes, for Suppress.
type windowedTable struct {
	// closeAfter is how long after a window's end it closes: the grace
	// period, and for sessions the inactivity gap plus the grace period.
	closeAfter int64
	// windowEnd reads the end of a row's window from its Windowed key.
	windowEnd func(key any) int64
}

// windowedInfo finds the windowed aggregation a table comes from, through
// the stateless table operations in between.
func (tn *tableNode) windowedInfo() *windowedTable {
	for n := tn; n != nil; n = n.parent {
		if n.windowed != nil {
			return n.windowed
		}
	}
	return nil
}
