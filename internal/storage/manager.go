package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/vfs"
)

// ManagerConfig holds the broker-level log settings, with Kafka's names.
type ManagerConfig struct {
	Dir                    string        // log.dirs (one directory)
	RetentionCheckInterval time.Duration // log.retention.check.interval.ms (default 5 min)
	FlushCheckInterval     time.Duration // how often flush.ms is checked (default 1 s)
	CheckpointInterval     time.Duration // log.flush.offset.checkpoint.interval.ms (default 60 s)
	ProducerIDExpiration   time.Duration // producer.id.expiration.ms (default 1 day)
	ProducerExpiryInterval time.Duration // producer.id.expiration.check.interval.ms (default 10 min)
	CleanerBackoff         time.Duration // log.cleaner.backoff.ms (default 15 s)
	CleanerMapMemory       int           // log.cleaner.dedupe.buffer.size / log.cleaner.threads (default 128 MiB)
	CleanerDisabled        bool          // log.cleaner.enable=false
	// CleanerPaused starts the cleaner paused (log.cleaner.threads=0,
	// which SetCleaner can change while running).
	CleanerPaused bool
	// CleanerIOBytesPerSecond caps the cleaner's disk reads and writes
	// together (log.cleaner.io.max.bytes.per.second); 0 or +Inf: no cap.
	CleanerIOBytesPerSecond float64
}

func (c *ManagerConfig) fill() {
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 5 * time.Minute
	}
	if c.FlushCheckInterval <= 0 {
		c.FlushCheckInterval = time.Second
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = time.Minute
	}
	if c.ProducerIDExpiration <= 0 {
		c.ProducerIDExpiration = time.Duration(DefaultProducerIDExpirationMs) * time.Millisecond
	}
	if c.ProducerExpiryInterval <= 0 {
		c.ProducerExpiryInterval = 10 * time.Minute
	}
	if c.CleanerBackoff <= 0 {
		c.CleanerBackoff = 15 * time.Second
	}
	if c.CleanerMapMemory <= 0 {
		c.CleanerMapMemory = 128 << 20
	}
}

// Manager owns the logs of one data directory, one subdirectory per
// partition named "topic-partition" as in Kafka, and runs their background
// work: retention, flush.ms, recovery-point checkpoints and producer-ID
// expiry.
type Manager struct {
	cfg   ManagerConfig
	opts  Options
	tasks *task.Group
	// cleanerSettings are the cleaner's dynamic settings (SetCleaner).
	cleanerSettings atomic.Pointer[CleanerSettings]

	// HighWatermark bounds retention per partition; nil means the log end
	// (a single replica). Set before Start.
	HighWatermark func(tp model.TopicPartition, l *Log) int64

	// cleanerRounds is notified after every round of the log cleaner.
	cleanerRounds task.Broadcast

	mu struct {
		sync.Mutex
		logs   map[model.TopicPartition]*Log
		closed bool
		lock   io.Closer // the data directory's lockFile; nil once released
	}
}

// lockFile is the file the Manager holds locked in its data directory, as
// Kafka holds .lock in each log dir, so a second broker on the directory is
// refused before it touches anything: the controller's raft store under the
// same directory included, which the broker opens only after NewManager.
// It is not a partition directory, so OnDisk skips it.
const lockFile = ".lock"

// NewManager creates the data directory if needed, durably (with its
// missing parents), and locks it until Close: if another process holds the
// lock, it fails with ErrLogDirLocked. It opens no log; call OpenLog per
// partition (the broker knows which exist from metadata), then Start.
func NewManager(cfg ManagerConfig, opts Options) (*Manager, error) {
	cfg.fill()
	opts.fill()
	if err := vfs.MkdirAllDurable(opts.FS, cfg.Dir); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", cfg.Dir, err)
	}
	lock, err := opts.FS.Lock(filepath.Join(cfg.Dir, lockFile))
	if errors.Is(err, vfs.ErrLocked) {
		return nil, &dirLockedError{dir: cfg.Dir, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("storage: lock %s: %w", cfg.Dir, err)
	}
	m := &Manager{cfg: cfg, opts: opts}
	m.SetCleaner(CleanerSettings{MapMemory: cfg.CleanerMapMemory, Paused: cfg.CleanerPaused, IOBytesPerSecond: cfg.CleanerIOBytesPerSecond})
	m.mu.logs = map[model.TopicPartition]*Log{}
	m.mu.lock = lock
	return m, nil
}

// Start runs the background work until Close.
func (m *Manager) Start(ctx context.Context) {
	m.tasks = task.NewGroup(ctx)
	m.tasks.Every(m.cfg.RetentionCheckInterval, func(context.Context) { m.each("retention", m.retain) })
	m.tasks.Every(m.cfg.FlushCheckInterval, func(context.Context) { m.each("flush", (*Log).FlushIfDue) })
	m.tasks.Every(m.cfg.CheckpointInterval, func(context.Context) { m.each("checkpoint", (*Log).Checkpoint) })
	if !m.cfg.CleanerDisabled {
		m.tasks.Every(m.cfg.CleanerBackoff, func(context.Context) {
			if !m.cleaner().Paused {
				m.cleanDirtiest()
			}
		})
	}
	expiry := m.cfg.ProducerIDExpiration.Milliseconds()
	m.tasks.Every(m.cfg.ProducerExpiryInterval, func(context.Context) {
		m.each("producer expiry", func(l *Log) error { l.ExpireProducers(expiry); return nil })
	})
}

func (m *Manager) retain(l *Log) error {
	n, err := l.EnforceRetention(m.highWatermark(l))
	if n > 0 {
		m.opts.Logger.Info("deleted segments by retention", "component", "storage", "dir", l.dir, "segments", n)
	}
	return err
}

// each runs fn on every open log, logging failures: one bad log must not
// stop the others' retention or flushing.
func (m *Manager) each(what string, fn func(*Log) error) {
	for _, l := range m.Logs() {
		if err := fn(l); err != nil && !errors.Is(err, ErrClosed) {
			m.opts.Logger.Error(what+" failed", "component", "storage", "dir", l.dir, "err", err)
		}
	}
}

// Stats are the counts of the Manager's logs' work, for metrics.
func (m *Manager) Stats() *Stats { return m.opts.Stats }

// PartitionDir is the directory of a partition's log.
func (m *Manager) PartitionDir(tp model.TopicPartition) string {
	return filepath.Join(m.cfg.Dir, tp.String())
}

// OpenLog returns the partition's log, opening (and recovering) or creating
// it on first use.
func (m *Manager) OpenLog(tp model.TopicPartition, cfg Config) (*Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	if l, ok := m.mu.logs[tp]; ok {
		return l, nil
	}
	l, err := Open(m.PartitionDir(tp), cfg, m.opts)
	if err != nil {
		return nil, err
	}
	m.mu.logs[tp] = l
	return l, nil
}

// Log returns an open log.
func (m *Manager) Log(tp model.TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.mu.logs[tp]
	return l, ok
}

// Logs returns every open log.
func (m *Manager) Logs() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.mu.logs))
	for _, l := range m.mu.logs {
		out = append(out, l)
	}
	return out
}

// OnDisk lists the partitions that have a directory, open or not.
func (m *Manager) OnDisk() ([]model.TopicPartition, error) {
	names, err := m.opts.FS.ReadDir(m.cfg.Dir)
	if err != nil {
		return nil, err
	}
	var out []model.TopicPartition
	for _, n := range names {
		if tp, err := model.ParseTopicPartition(n); err == nil {
			out = append(out, tp)
		}
	}
	return out, nil
}

// DeleteLog closes the partition's log (if open) and removes its directory.
func (m *Manager) DeleteLog(tp model.TopicPartition) error {
	m.mu.Lock()
	l, ok := m.mu.logs[tp]
	delete(m.mu.logs, tp)
	m.mu.Unlock()
	var err error
	if ok {
		err = l.Close()
	}
	err = errors.Join(err, m.opts.FS.RemoveAll(m.PartitionDir(tp)), m.opts.FS.SyncDir(m.cfg.Dir))
	if err != nil {
		return fmt.Errorf("storage: delete %s: %w", tp, err)
	}
	return nil
}

// Close stops the background work, closes every log cleanly, and then
// releases the data directory's lock.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closed = true
	logs := m.mu.logs
	m.mu.logs = map[model.TopicPartition]*Log{}
	lock := m.mu.lock
	m.mu.lock = nil
	m.mu.Unlock()
	if m.tasks != nil {
		m.tasks.Stop()
	}
	var err error
	for _, l := range logs {
		err = errors.Join(err, l.Close())
	}
	if lock != nil {
		err = errors.Join(err, lock.Close())
	}
	return err
}

// cleanDirtiest is one round of the cleaner, as Kafka's cleaner thread
// chooses work: every compacted log whose dirty ratio reaches
// min.cleanable.dirty.ratio, whose dirty section is older than
// max.compaction.lag.ms, or whose tombstones' delete horizon has come, is
// cleaned, the dirtiest first. The cleanable range stops at each
// partition's high watermark.
func (m *Manager) cleanDirtiest() {
	defer m.cleanerRounds.Notify()
	nowMs := m.opts.Clock.Now().UnixMilli()
	type candidate struct {
		l     *Log
		ratio float64
		hw    int64
	}
	var due []candidate
	var maxRatio float64
	var maxDelayMs int64
	for _, l := range m.Logs() {
		cfg := l.Config()
		if !cfg.Compacted {
			continue
		}
		hw := m.highWatermark(l)
		if hw <= 0 {
			continue // nothing committed yet
		}
		c := l.Cleanability(nowMs, hw)
		ratio := c.Ratio()
		maxRatio, maxDelayMs = max(maxRatio, ratio), max(maxDelayMs, c.CompactionDelayMs)
		if (c.DirtyBytes > 0 && ratio >= cfg.MinCleanableDirtyRatio) || c.MaxLagExceeded || c.HorizonDue {
			due = append(due, candidate{l, ratio, hw})
		}
	}
	uncleanable := 0
	defer func() {
		m.opts.Stats.cleanerRound(m.opts.Clock.Now(), maxRatio, time.Duration(maxDelayMs)*time.Millisecond, uncleanable)
	}()
	slices.SortStableFunc(due, func(a, b candidate) int { return cmp.Compare(b.ratio, a.ratio) })
	for _, c := range due {
		if m.tasks != nil && m.tasks.Context().Err() != nil {
			return
		}
		cs := m.cleaner()
		start := m.opts.Clock.Now()
		stats, err := c.l.Clean(CleanOptions{MapMemory: cs.MapMemory, MaxOffset: c.hw, Throttle: cs.throttle})
		if !errors.Is(err, ErrCleanerBusy) && !errors.Is(err, ErrClosed) {
			m.opts.Stats.cleanerPass(stats, m.opts.Clock.Now().Sub(start), err)
		}
		switch {
		case errors.Is(err, ErrCleanerBusy) || errors.Is(err, ErrClosed):
		case err != nil:
			uncleanable++
			m.opts.Logger.Error("cleaning failed", "component", "storage", "dir", c.l.dir, "err", err)
		case stats.SegmentsCleaned > 0:
			m.opts.Logger.Info("cleaned log", "component", "storage", "dir", c.l.dir, "dirty_ratio", c.ratio,
				"segments", stats.SegmentsCleaned, "into", stats.SegmentsWritten,
				"bytes_read", stats.BytesRead, "bytes_written", stats.BytesWritten, "records_removed", stats.RecordsRemoved)
		}
	}
}

// highWatermark is the partition's high watermark, or its log end without
// a HighWatermark hook.
// CleanerSettings are the log cleaner's settings that can change while the
// broker runs, as Kafka's dynamic log.cleaner.* configs.
type CleanerSettings struct {
	MapMemory        int     // key map memory per pass
	Paused           bool    // no cleaning (log.cleaner.threads=0)
	IOBytesPerSecond float64 // log.cleaner.io.max.bytes.per.second; <= 0 or huge: none
	throttle         *Throttle
}

// SetCleaner changes the cleaner's settings; a pass already running keeps
// the ones it started with.
func (m *Manager) SetCleaner(s CleanerSettings) {
	if s.MapMemory <= 0 {
		s.MapMemory = 128 << 20
	}
	if cur := m.cleanerSettings.Load(); cur != nil && cur.IOBytesPerSecond == s.IOBytesPerSecond {
		s.throttle = cur.throttle // keep the period's accounting
	} else {
		s.throttle = NewThrottle(s.IOBytesPerSecond, m.opts.Clock)
	}
	m.cleanerSettings.Store(&s)
}

func (m *Manager) cleaner() *CleanerSettings { return m.cleanerSettings.Load() }

// Cleaner reports the cleaner's current settings.
func (m *Manager) Cleaner() CleanerSettings { return *m.cleaner() }

// CleanerRound returns a channel closed when the log cleaner next finishes
// a round (choosing the due logs and cleaning them), for tests and tools
// that wait for compaction as an event.
func (m *Manager) CleanerRound() <-chan struct{} { return m.cleanerRounds.Wait() }

func (m *Manager) highWatermark(l *Log) int64 {
	if m.HighWatermark != nil {
		if tp, err := model.ParseTopicPartition(filepath.Base(l.dir)); err == nil {
			return m.HighWatermark(tp, l)
		}
	}
	return l.LogEndOffset()
}
