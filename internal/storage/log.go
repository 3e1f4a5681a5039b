package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Options are a log's collaborators. Zero values take defaults.
type Options struct {
	FS     vfs.FS       // default vfs.OS
	Clock  clock.Clock  // default clock.Real
	Logger *slog.Logger // default slog.Default()
	// Stats is where the logs count their work for metrics: a Manager
	// shares one among its logs (Manager.Stats). Default: new ones.
	Stats *Stats
	// OnIOError, when set, hears of each I/O error the log meets: the
	// failed write, sync or truncate that fails it, and a failed read. A
	// Manager takes the log's data directory offline (dirs.go). It runs
	// with the log's lock held, so it must not call the log.
	OnIOError func(error)
}

func (o *Options) fill() {
	if o.FS == nil {
		o.FS = vfs.OS
	}
	if o.Clock == nil {
		o.Clock = clock.Real
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Stats == nil {
		o.Stats = new(Stats)
	}
}

// Log is one partition's log. All methods are safe for concurrent use.
//
// Lock order: syncMu before mu. Appends, rolls, truncation and retention
// take mu for writing; reads take it for reading only long enough to pick a
// segment and an index position, then read the file without it.
type Log struct {
	dir  string
	opts Options

	mu struct {
		sync.RWMutex
		cfg            Config
		segments       []*segment // sorted by base offset; the last is active
		nextOffset     int64      // the log end offset
		logStartOffset int64
		recoveryPoint  int64 // every batch below is durable
		truncations    int64 // bumped by truncation, so a racing flush does not overstate the recovery point
		firstDirty     int64 // where the cleaner's dirty section starts (cleaner_checkpoint.go)
		nextHorizonMs  int64 // the earliest delete horizon the last pass left in the log; 0 if none
		appended       int64 // records appended since open
		flushed        int64 // value of appended at the last flush
		lastFlushMs    int64
		failed         error // sticky: set by the first failed write
		closed         bool
		epochs         *epochCache
		gapped         bool                // the log took an offset gap outside compaction (gapMarkerFile)
		producers      *ProducerStateTable // idempotence and transactions (producer_state.go)
	}

	syncMu   sync.Mutex
	syncCond *sync.Cond
	syncing  bool // a flush is running; others wait on syncCond

	durable atomic.Int64 // recoveryPoint, readable without mu

	// cleaning is set while a cleaning pass runs: one pass per log.
	cleaning atomic.Bool
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// Config returns the log's configuration.
func (l *Log) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.cfg
}

// SetConfig replaces the configuration; it applies from the next append.
func (l *Log) SetConfig(cfg Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Gaps already in the log stay there whatever the topic becomes (a
	// mirror promoted to an ordinary topic): recovery must keep taking them.
	cfg.OffsetGaps = cfg.OffsetGaps || l.mu.gapped
	l.mu.cfg = cfg
	for _, s := range l.mu.segments {
		s.setConfig(&l.mu.cfg)
	}
}

// Offsets is a consistent view of the log's bounds.
type Offsets struct {
	LogStartOffset int64
	LogEndOffset   int64
	RecoveryPoint  int64 // durable end: every batch below it has been fsynced (a durable-mode follower reports it as its log end)
	Size           int64 // bytes in all segments
	Segments       int
}

// Offsets returns the log's current bounds.
func (l *Log) Offsets() Offsets {
	l.mu.RLock()
	defer l.mu.RUnlock()
	o := Offsets{LogStartOffset: l.mu.logStartOffset, LogEndOffset: l.mu.nextOffset, RecoveryPoint: l.mu.recoveryPoint, Segments: len(l.mu.segments)}
	for _, s := range l.mu.segments {
		o.Size += s.size.Load()
	}
	return o
}

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.nextOffset
}

// LogStartOffset is the first offset that can be read.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.logStartOffset
}

// AppendResult describes a successful append.
type AppendResult struct {
	FirstOffset    int64
	LastOffset     int64
	LogAppendTime  int64 // -1 unless the topic uses LogAppendTime
	MaxTimestamp   int64
	LogStartOffset int64
	Records        int64
	// Duplicate: the batch was a retry of one of its producer's last five
	// (same epoch and sequences); nothing was written and the offsets are
	// the original append's.
	Duplicate bool
}

// AppendAsLeader appends one or more validated batches (record.Validate),
// assigning offsets from the log end and stamping leaderEpoch, rewriting
// the batches in place. All batches go to one segment.
func (l *Log) AppendAsLeader(data []byte, leaderEpoch int32) (AppendResult, error) {
	return l.append(data, leaderEpoch, true)
}

// AppendAsFollower appends batches exactly as a leader wrote them
// (replication): their offsets, partition leader epochs, timestamps,
// attributes and CRCs are kept, and each batch's CRC is checked
// (record.ErrCorrupt).
//
// The first batch must start at or past the log end and each later one
// at or past the end of the one before: a batch may start further on, as
// in Kafka, since a leader's log has gaps where its cleaner removed offsets
// or where a mirror append kept a source cluster's (AppendMirror). A gap
// outside compaction is recorded first (gapMarkerFile), so recovery keeps
// taking it. A batch below is ErrInvalidOffset. One exception, Kafka's too: on an empty log, a
// first batch that holds the log end (the leader's log start fell inside
// it, after DeleteRecords, and the follower started its log there with
// TruncateFullyAndStartAt) restarts the log at the batch's base offset,
// keeping the log start offset. A batch whose first offsets lie below the
// end of a log that is not empty is refused too: the follower's end is
// inside a batch of the leader's, so its log differs there, and it must
// truncate to the batch's base and fetch again, which
// replication.Partition.AppendAsFollower does before it gets here.
//
// Each new partition leader epoch starts an entry in the epoch cache at
// its batch (Kafka's assignEpochStartOffset), so EndOffsetForEpoch answers
// as on the leader; an epoch older than the log's batches', or than an
// earlier batch of the append, is ErrLeaderEpochRegression. The producer
// state learns every batch and transaction marker without the leader's
// checks (Kafka's AppendOrigin.REPLICATION): the leader already accepted
// them, and a promoted follower then deduplicates retries and fences old
// producer epochs as its leader did.
func (l *Log) AppendAsFollower(data []byte) (AppendResult, error) {
	return l.append(data, -1, false)
}

func (l *Log) append(data []byte, leaderEpoch int32, assign bool) (AppendResult, error) {
	res := AppendResult{LogAppendTime: -1, MaxTimestamp: -1}
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return res, err
	}
	if !assign {
		if err := l.startAtStraddlingBatchLocked(data); err != nil {
			l.mu.Unlock()
			return res, err
		}
	}
	pa := l.mu.producers.NewAppend()
	batches, err := l.prepareLocked(data, leaderEpoch, assign, pa, &res)
	if err == nil && res.Duplicate {
		res.LogStartOffset = l.mu.logStartOffset
		l.mu.Unlock()
		return res, nil
	}
	if err == nil {
		err = l.writeLocked(data, batches, leaderEpoch, assign)
	}
	if err != nil {
		l.mu.Unlock()
		return res, err
	}
	return l.commitAppendLocked(pa, res)
}

// commitAppendLocked ends an append that wrote its batches: it commits the
// producer state, answers the log start offset, releases l.mu, and flushes
// when flush.messages says so.
func (l *Log) commitAppendLocked(pa *ProducerAppend, res AppendResult) (AppendResult, error) {
	pa.Commit()
	res.LogStartOffset = l.mu.logStartOffset
	flush := l.mu.appended-l.mu.flushed >= l.mu.cfg.FlushMessages
	l.mu.Unlock()
	if flush {
		if err := l.Flush(); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (l *Log) writableLocked() error {
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.failed != nil {
		return fmt.Errorf("%w: %w", ErrLogFailed, l.mu.failed)
	}
	return nil
}

// prepareLocked walks the batches, assigning offsets when leading, and
// returns what the segment needs to index them.
//
// As leader, each producer batch is checked against its producer's state
// (sequence, epoch); a retried batch makes the whole append a duplicate.
// The producer state changes are staged in pa, committed after the write.
func (l *Log) prepareLocked(data []byte, leaderEpoch int32, assign bool, pa *ProducerAppend, res *AppendResult) ([]batchInfo, error) {
	appendTime := int64(-1)
	if assign && l.mu.cfg.LogAppendTime {
		appendTime = l.opts.Clock.Now().UnixMilli()
		res.LogAppendTime = appendTime
	}
	next := l.mu.nextOffset
	epochFloor := l.mu.epochs.dataEpoch(next) // no batch may go below it
	var batches []batchInfo
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err == nil {
			err = record.CheckComplete(&h, data[pos:])
		}
		if err != nil {
			return nil, fmt.Errorf("storage: append to %s: %w", l.dir, err)
		}
		batch := data[pos : pos+h.Size()]
		if assign && h.ProducerID >= 0 && !h.IsControl() && h.BaseSequence == record.NoSequence {
			// A coordinator's transactional batch (TxnOffsetCommit): no
			// sequence to check, only the producer's epoch, as Kafka
			// checks appends of coordinator origin.
			if err := l.mu.producers.CheckCoordinatorBatch(&h); err != nil {
				return nil, fmt.Errorf("storage: append to %s: producer %d: %w", l.dir, h.ProducerID, err)
			}
		} else if assign && h.ProducerID >= 0 && h.IsControl() {
			// A transaction marker from a coordinator older than one
			// this producer's markers came from is a deposed
			// coordinator's (KIP-98): refused, so it cannot end a
			// transaction the new coordinator decides.
			m, ok, err := parseMarker(batch)
			if err == nil && ok {
				err = pa.CheckMarker(h.ProducerID, h.ProducerEpoch, m.coordinatorEpoch)
			}
			if err != nil {
				return nil, fmt.Errorf("storage: append to %s: producer %d: %w", l.dir, h.ProducerID, err)
			}
		} else if assign && h.ProducerID >= 0 && !h.IsControl() {
			dup, err := pa.Check(&h)
			if err != nil {
				return nil, fmt.Errorf("storage: append to %s: producer %d: %w", l.dir, h.ProducerID, err)
			}
			if dup != nil {
				res.FirstOffset, res.LastOffset, res.Duplicate = dup.FirstOffset, dup.LastOffset, true
				return nil, nil
			}
		}
		if assign {
			if leaderEpoch >= 0 && leaderEpoch < epochFloor {
				// Recovery would take the batch for a garbled one
				// (checkRecovered) and cut the log there.
				return nil, fmt.Errorf("%w: %s: append as leader in epoch %d after batches of epoch %d", ErrLeaderEpochRegression, l.dir, leaderEpoch, epochFloor)
			}
			record.AssignOffsets(batch, next, leaderEpoch, appendTime)
			h.BaseOffset = next
			if appendTime >= 0 {
				h.MaxTimestamp = appendTime
			}
		} else if err := l.checkFollowerBatch(batch, &h, next, &epochFloor); err != nil {
			return nil, err
		}
		if err := pa.UpdateBatch(batch); err != nil {
			return nil, fmt.Errorf("storage: append to %s: %w", l.dir, err)
		}
		batches = append(batches, batchInfo{baseOffset: h.BaseOffset, lastOffset: h.LastOffset(), maxTimestamp: h.MaxTimestamp, size: h.Size()})
		res.Records += int64(h.NumRecords)
		res.MaxTimestamp = max(res.MaxTimestamp, h.MaxTimestamp)
		next = h.NextOffset()
		pos += h.Size()
	}
	if len(batches) == 0 {
		return nil, fmt.Errorf("storage: append to %s: %w: no batches", l.dir, record.ErrCorrupt)
	}
	res.FirstOffset = batches[0].baseOffset
	res.LastOffset = batches[len(batches)-1].lastOffset
	return batches, nil
}

// checkFollowerBatch holds a batch a follower appends to AppendAsFollower's
// rules; next is the log end, or the offset after the previous batch, and
// epochFloor the newest leader epoch of the log's batches and the
// append's so far, which the batch's raises.
func (l *Log) checkFollowerBatch(batch []byte, h *record.Header, next int64, epochFloor *int32) error {
	if err := record.CheckCRC(batch); err != nil {
		return fmt.Errorf("storage: append to %s: %w", l.dir, err)
	}
	if h.BaseOffset < next || h.LastOffsetDelta < 0 {
		return fmt.Errorf("%w: %s: follower batch %d..%d does not start at offset %d", ErrInvalidOffset, l.dir, h.BaseOffset, h.LastOffset(), next)
	}
	if ep := h.PartitionLeaderEpoch; ep >= 0 {
		if ep < *epochFloor {
			return fmt.Errorf("%w: %s: follower batch %d..%d has leader epoch %d, after batches of epoch %d", ErrLeaderEpochRegression, l.dir, h.BaseOffset, h.LastOffset(), ep, *epochFloor)
		}
		*epochFloor = ep
	}
	return nil
}

// startAtStraddlingBatchLocked restarts an empty log at the base offset of
// a first batch that holds its end (see AppendAsFollower), keeping the log
// start offset, so the batch can be appended whole. Any other append is
// left to checkFollowerBatch.
func (l *Log) startAtStraddlingBatchLocked(data []byte) error {
	end := l.mu.nextOffset
	h, err := record.ParseHeader(data)
	if err != nil || end != l.mu.logStartOffset || h.BaseOffset >= end || h.LastOffset() < end {
		return nil
	}
	if err := record.CheckComplete(&h, data); err != nil {
		return fmt.Errorf("storage: append to %s: %w", l.dir, err)
	}
	if err := record.CheckCRC(data[:h.Size()]); err != nil {
		return fmt.Errorf("storage: append to %s: %w", l.dir, err)
	}
	return l.truncateFullyLocked(h.BaseOffset, end)
}

// writeLocked rolls if needed and writes the batches. Any I/O error fails
// the log: what reached the disk is unknown until recovery.
func (l *Log) writeLocked(data []byte, batches []batchInfo, leaderEpoch int32, assign bool) error {
	first, last := batches[0], batches[len(batches)-1]
	active := l.activeLocked()
	now := l.opts.Clock.Now()
	if active.shouldRoll(&l.mu.cfg, len(data), first.maxTimestamp, last.lastOffset, now) {
		// At the log end, where a leader's first batch starts anyway: a
		// compacted follower's may start further on, and a segment that
		// ended short of the next one's base would pass, in recovery, for
		// one that lost its tail (loadSegments), taking the later
		// segments with it.
		base := l.mu.nextOffset
		if last.lastOffset-base > math.MaxInt32 {
			base = first.baseOffset
		}
		var err error
		if active, err = l.rollLocked(base); err != nil {
			return l.rollFailedLocked(err)
		}
	}
	if _, ok := active.relative(last.lastOffset); !ok || first.baseOffset < active.baseOffset {
		return fmt.Errorf("%w: %s: offsets %d..%d do not fit segment %d", ErrInvalidOffset, l.dir, first.baseOffset, last.lastOffset, active.baseOffset)
	}
	if err := l.markGapsLocked(batches); err != nil {
		return l.failLocked(err)
	}
	// The epochs go first, as in Kafka: a crash between the two then
	// leaves an epoch that starts past the batches, which reopening drops,
	// never batches whose epoch the cache lacks.
	if err := l.assignEpochsLocked(data, batches, leaderEpoch, assign); err != nil {
		if errors.Is(err, ErrTooManyOpenFiles) {
			return err // nothing written; the entries saved before it hold no batch yet, which is allowed
		}
		return l.failLocked(err)
	}
	if err := active.append(data, batches, &l.mu.cfg); err != nil {
		return l.failLocked(err)
	}
	l.mu.nextOffset = last.lastOffset + 1
	for _, b := range batches {
		l.mu.appended += b.lastOffset - b.baseOffset + 1
	}
	return nil
}

// assignEpochsLocked starts leader-epoch entries for the batches about to
// be appended: the leader's epoch, or each batch's partition leader epoch
// on a follower (Kafka's assignEpochStartOffset), so the follower's
// EndOffsetForEpoch answers as its leader's.
func (l *Log) assignEpochsLocked(data []byte, batches []batchInfo, leaderEpoch int32, assign bool) error {
	end := l.mu.nextOffset
	if assign {
		return l.mu.epochs.assign(leaderEpoch, batches[0].baseOffset, end)
	}
	pos := 0
	for _, b := range batches {
		h, _ := record.ParseHeader(data[pos:])
		if err := l.mu.epochs.assign(h.PartitionLeaderEpoch, b.baseOffset, end); err != nil {
			return err
		}
		end = b.lastOffset + 1
		pos += b.size
	}
	// A batch that straddles the log start (AppendAsFollower) starts its
	// epoch where the log does, as on the leader.
	return l.mu.epochs.truncateFromStart(l.mu.logStartOffset)
}

func (l *Log) failLocked(err error) error {
	if l.mu.failed == nil {
		l.mu.failed = err
		l.opts.Logger.Error("log failed; refusing writes until reopened", "component", "storage", "dir", l.dir, "err", err)
		if l.opts.OnIOError != nil {
			l.opts.OnIOError(err)
		}
	}
	return fmt.Errorf("%w: %w", ErrLogFailed, err)
}

func (l *Log) activeLocked() *segment { return l.mu.segments[len(l.mu.segments)-1] }

// rollLocked seals the active segment and starts a new one at base. The
// directory is synced so the new segment's name survives a crash.
//
// The old segment's indexes are written and synced here, once per segment
// (until now they were only in memory): a flush syncs only log files, and
// the recovery point may pass this segment's end only once its indexes are
// durable, since recovery trusts them then. The directory sync below makes
// their names durable with the new segment's.
func (l *Log) rollLocked(base int64) (*segment, error) {
	old := l.activeLocked()
	old.seal()
	// At the open-files limit either step fails before anything changed
	// but an extra (valid) time entry and index files the active segment
	// may have anyway: the old segment stays active (rollFailedLocked).
	if err := old.writeIndexes(); err != nil {
		return nil, fileLimitError(err)
	}
	s, err := createSegment(l.opts.FS, l.dir, base, &l.mu.cfg, l.opts.Clock.Now())
	if err != nil {
		return nil, fileLimitError(err)
	}
	if err := l.opts.FS.SyncDir(l.dir); err != nil {
		s.release()
		return nil, err
	}
	l.mu.segments = append(l.mu.segments, s)
	// Everything below base is in the table (an append's changes are
	// committed after its write), so recovery replays at most one segment.
	if err := l.mu.producers.WriteSnapshot(l.opts.FS, l.dir, base); err != nil {
		if !atFileLimit(err) {
			return nil, err
		}
		// A snapshot only shortens a replay: without it the next
		// recovery replays from an older one.
		l.opts.Logger.Warn("no producer-state snapshot at this roll: at the open-files limit", "component", "storage", "dir", l.dir, "err", err)
	}
	return s, nil
}

// rollFailedLocked is what a failed roll does to the log: at the
// open-files limit nothing changed and the caller's operation fails
// (ErrTooManyOpenFiles), to be tried again; any other error fails the log.
func (l *Log) rollFailedLocked(err error) error {
	if errors.Is(err, ErrTooManyOpenFiles) {
		l.opts.Logger.Warn("could not roll a segment: at the open-files limit; the append fails and the log stays writable",
			"component", "storage", "dir", l.dir, "err", err)
		return err
	}
	return l.failLocked(err)
}

// Roll starts a new segment now, unless the active one is empty.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if l.activeLocked().empty() {
		return nil
	}
	if _, err := l.rollLocked(l.mu.nextOffset); err != nil {
		return l.rollFailedLocked(err)
	}
	return nil
}

// segmentIndexLocked returns the index of the segment that holds off: the
// last one whose base offset is <= off.
func (l *Log) segmentIndexLocked(off int64) int {
	i := sort.Search(len(l.mu.segments), func(i int) bool { return l.mu.segments[i].baseOffset > off })
	return max(i-1, 0)
}
