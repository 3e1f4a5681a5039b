package replication

import (
	"testing"

	"github.com/samsa-io/samsa/internal/record"
)

// startsInsideLog decides when a follower cuts its log for a leader's
// batch: only for a batch that holds the end of a log that is not empty,
// and never for one of an older epoch than the log's newest, which only
// a late answer brings.
func TestStartsInsideLog(t *testing.T) {
	batch := func(base, last int64, epoch int32) *record.Header {
		return &record.Header{BaseOffset: base, LastOffsetDelta: int32(last - base), PartitionLeaderEpoch: epoch}
	}
	for _, tc := range []struct {
		name          string
		h             *record.Header
		logStart, end int64
		latest        int32
		want          bool
	}{
		{"starts at the end", batch(10, 14, 3), 0, 10, 3, false},
		{"starts past the end (compacted)", batch(12, 14, 3), 0, 10, 3, false},
		{"holds the end", batch(8, 14, 3), 0, 10, 3, true},
		{"ends at the end", batch(8, 10, 3), 0, 10, 3, true},
		{"ends below the end: late answer", batch(6, 9, 3), 0, 10, 3, false},
		{"newer epoch", batch(8, 14, 4), 0, 10, 3, true},
		{"older epoch: late answer", batch(8, 14, 2), 0, 10, 3, false},
		{"log with no epochs", batch(8, 14, 3), 0, 10, -1, true},
		{"empty log: left to storage", batch(8, 14, 3), 10, 10, -1, false},
		{"below the log start", batch(2, 14, 3), 5, 10, 3, true},
	} {
		if got := startsInsideLog(tc.h, tc.logStart, tc.end, tc.latest); got != tc.want {
			t.Errorf("%s: batch %d-%d@%d, log [%d, %d) epoch %d: %v, want %v", tc.name,
				tc.h.BaseOffset, tc.h.LastOffset(), tc.h.PartitionLeaderEpoch, tc.logStart, tc.end, tc.latest, got, tc.want)
		}
	}
}
