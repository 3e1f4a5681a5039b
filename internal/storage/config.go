package storage

import (
	"math"
	"time"
)

// Config is one log's configuration, in Kafka's topic-config terms. The
// broker resolves it from topic overrides and broker defaults
// (internal/config) and may replace it while the log is open (SetConfig).
type Config struct {
	SegmentBytes       int64 // segment.bytes: roll when the active segment would pass this
	SegmentMs          int64 // segment.ms: roll when the active segment's first batch is this old
	SegmentJitterMs    int64 // segment.jitter.ms: subtracted from SegmentMs, fixed per segment
	SegmentIndexBytes  int64 // segment.index.bytes: roll when the offset index holds this many bytes
	IndexIntervalBytes int64 // index.interval.bytes: bytes between offset index entries
	RetentionMs        int64 // retention.ms: -1 keeps forever
	RetentionBytes     int64 // retention.bytes: -1 keeps forever
	FlushMessages      int64 // flush.messages: fsync after this many unflushed records
	FlushMs            int64 // flush.ms: fsync when the oldest unflushed append is this old (Manager)
	LogAppendTime      bool  // message.timestamp.type=LogAppendTime
	// Compacted: cleanup.policy includes compact, so batches may have
	// offset gaps and recovery can only check that offsets grow. Without
	// it, recovery also demands contiguous offsets (see checkRecovered).
	Compacted bool
	// OffsetGaps: offsets may have gaps outside compaction too, as in a
	// mirror topic's log, whose batches keep the offsets of a source
	// cluster that left some out (aborted transactions, control batches,
	// its own compaction). Recovery then only checks that offsets grow.
	// A log that once took a gap keeps it on (see gapMarkerFile).
	OffsetGaps bool
	// Deletes: cleanup.policy includes delete (retention applies). A
	// compact-only log keeps old segments until the cleaner rewrites them.
	Deletes bool
	// Compaction settings (topic configs of the same names).
	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio (0.5)
	MinCompactionLagMs     int64   // min.compaction.lag.ms (0)
	MaxCompactionLagMs     int64   // max.compaction.lag.ms (MaxInt64)
	DeleteRetentionMs      int64   // delete.retention.ms (1 day): how long tombstones stay after cleaning
}

// DefaultConfig is Kafka's default topic configuration.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentMs:          int64(7 * 24 * time.Hour / time.Millisecond),
		SegmentIndexBytes:  10 << 20,
		IndexIntervalBytes: 4096,
		RetentionMs:        int64(7 * 24 * time.Hour / time.Millisecond),
		RetentionBytes:     -1,
		FlushMessages:      math.MaxInt64,
		FlushMs:            math.MaxInt64,
		Deletes:            true,

		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLagMs:     math.MaxInt64,
		DeleteRetentionMs:      int64(24 * time.Hour / time.Millisecond),
	}
}

// rollMs is how old the active segment may grow: segment.ms, or
// max.compaction.lag.ms when that is shorter on a compacted log, since the
// cleaner never touches the active segment (KIP-354).
func (c *Config) rollMs() int64 {
	if c.Compacted && c.MaxCompactionLagMs > 0 && c.MaxCompactionLagMs < c.SegmentMs {
		return c.MaxCompactionLagMs
	}
	return c.SegmentMs
}

// gapsAllowed reports whether batches may leave offsets out: recovery
// cannot then demand contiguous offsets.
func (c *Config) gapsAllowed() bool { return c.Compacted || c.OffsetGaps }

func (c *Config) maxIndexEntries() int {
	n := c.SegmentIndexBytes / offsetEntrySize
	return int(max(n, 1))
}
