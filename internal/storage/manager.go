package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/task"
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

	// HighWatermark bounds retention per partition; nil means the log end
	// (a single replica). Set before Start.
	HighWatermark func(tp model.TopicPartition, l *Log) int64

	mu struct {
		sync.Mutex
		logs   map[model.TopicPartition]*Log
		closed bool
	}
}

// NewManager creates the data directory if needed. It opens no log; call
// OpenLog per partition (the broker knows which exist from metadata), then
// Start.
func NewManager(cfg ManagerConfig, opts Options) (*Manager, error) {
	cfg.fill()
	opts.fill()
	if err := opts.FS.MkdirAll(cfg.Dir); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", cfg.Dir, err)
	}
	m := &Manager{cfg: cfg, opts: opts}
	m.mu.logs = map[model.TopicPartition]*Log{}
	return m, nil
}

// Start runs the background work until Close.
func (m *Manager) Start(ctx context.Context) {
	m.tasks = task.NewGroup(ctx)
	m.tasks.Every(m.cfg.RetentionCheckInterval, func(context.Context) { m.each("retention", m.retain) })
	m.tasks.Every(m.cfg.FlushCheckInterval, func(context.Context) { m.each("flush", (*Log).FlushIfDue) })
	m.tasks.Every(m.cfg.CheckpointInterval, func(context.Context) { m.each("checkpoint", (*Log).Checkpoint) })
	if !m.cfg.CleanerDisabled {
		m.tasks.Every(m.cfg.CleanerBackoff, func(context.Context) { m.each("clean", m.maybeClean) })
	}
	expiry := m.cfg.ProducerIDExpiration.Milliseconds()
	m.tasks.Every(m.cfg.ProducerExpiryInterval, func(context.Context) {
		m.each("producer expiry", func(l *Log) error { l.ExpireProducers(expiry); return nil })
	})
}

func (m *Manager) retain(l *Log) error {
	hw := l.LogEndOffset()
	if m.HighWatermark != nil {
		if tp, err := model.ParseTopicPartition(filepath.Base(l.dir)); err == nil {
			hw = m.HighWatermark(tp, l)
		}
	}
	n, err := l.EnforceRetention(hw)
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

// Close stops the background work and closes every log cleanly.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closed = true
	logs := m.mu.logs
	m.mu.logs = map[model.TopicPartition]*Log{}
	m.mu.Unlock()
	if m.tasks != nil {
		m.tasks.Stop()
	}
	var err error
	for _, l := range logs {
		err = errors.Join(err, l.Close())
	}
	return err
}

// maybeClean runs a cleaning pass on a compacted log once the bytes
// appended since its last pass reach min.cleanable.dirty.ratio of its size
// (an approximation of Kafka's dirty ratio, which tracks the cleaned
// boundary with a checkpoint).
func (m *Manager) maybeClean(l *Log) error {
	cfg := l.Config()
	if !cfg.Compacted {
		return nil
	}
	size := l.Offsets().Size
	dirty := l.dirtyBytes.Load()
	if size == 0 || float64(dirty) < cfg.MinCleanableDirtyRatio*float64(size) {
		return nil
	}
	stats, err := l.Clean(CleanOptions{MapMemory: m.cfg.CleanerMapMemory})
	if errors.Is(err, ErrCleanerBusy) {
		return nil
	}
	if err != nil {
		return err
	}
	l.dirtyBytes.Add(-dirty)
	if stats.SegmentsCleaned > 0 {
		m.opts.Logger.Info("cleaned log", "component", "storage", "dir", l.dir, "segments", stats.SegmentsCleaned,
			"bytes_read", stats.BytesRead, "bytes_written", stats.BytesWritten, "records_removed", stats.RecordsRemoved)
	}
	return nil
}
