package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
	Dirs                   []string      // log.dirs: one or more data directories (JBOD, dirs.go)
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
	// MaxOpenFiles is the most files the logs may hold open (a segment
	// holds one, its log): a log that would be opened past it is refused
	// with ErrTooManyOpenFiles, so the process keeps descriptors for its
	// connections and other files, where the open-files limit itself
	// would fail anything at random. 0: three quarters of the process's
	// open-files limit (RLIMIT_NOFILE, which Go raises to the hard limit
	// at start); negative: no budget.
	MaxOpenFiles int64
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
	if c.MaxOpenFiles == 0 {
		c.MaxOpenFiles = -1
		if limit := openFilesLimit(); limit > 0 {
			c.MaxOpenFiles = limit * 3 / 4
		}
	}
}

// Manager owns the logs of the broker's data directories (log.dirs), one
// subdirectory per partition named "topic-partition" as in Kafka, places
// new replicas, moves them between directories (move.go), takes a
// directory offline on an I/O error (dirs.go), and runs their background
// work: retention, flush.ms, recovery-point checkpoints and producer-ID
// expiry.
//
// Lock order: mu, then a log's locks, then state.mu (a log reports its
// I/O errors with its lock held, and markOffline takes only state.mu).
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

	// dirs are the data directories in log.dirs order; their online
	// state is guarded by dirs.mu.
	dirs  []*logDir
	state dirState

	// files counts the files the logs hold open, against
	// cfg.MaxOpenFiles.
	files *vfs.Counting

	mu struct {
		sync.Mutex
		logs    map[model.TopicPartition]*Log
		futures map[model.TopicPartition]*Log
		// where are the directories holding each partition's replicas,
		// open or not.
		where replicaDirs
		// preferred are the directories AlterReplicaLogDirs chose for
		// replicas this broker does not have yet (Kafka's preferredLogDirs).
		preferred map[model.TopicPartition]int
		closed    bool
	}
}

// lockFile is the file the Manager holds locked in each data directory, as
// Kafka holds .lock in each log dir, so a second broker on the directory is
// refused before it touches anything: the controller's raft store under the
// same directory included, which the broker opens only after NewManager.
// It is not a partition directory, so OnDisk skips it.
const lockFile = ".lock"

// NewManager creates the data directories if needed, durably (with their
// missing parents), locks each until Close (if another process holds a
// lock, it fails with ErrLogDirLocked), and finds the replicas they hold,
// settling what an interrupted move left (scanDirs). A directory that
// cannot be created, locked or listed is offline; every directory offline
// is an error. It opens no log; call OpenLog per partition (the broker
// knows which exist from metadata), then Start.
func NewManager(cfg ManagerConfig, opts Options) (*Manager, error) {
	cfg.fill()
	opts.fill()
	files := vfs.NewCounting(opts.FS)
	opts.FS = files
	dirs, err := openDirs(opts.FS, cfg.Dirs)
	if err != nil {
		return nil, err
	}
	where, err := scanDirs(opts.FS, dirs)
	if err != nil {
		closeDirs(dirs)
		return nil, err
	}
	m := &Manager{cfg: cfg, opts: opts, dirs: dirs, files: files}
	if cfg.MaxOpenFiles > 0 {
		opts.Logger.Info("the logs may hold this many files open (a segment holds one); past it a new partition's log is refused, with the rest left to connections",
			"component", "storage", "max_open_files", cfg.MaxOpenFiles)
	}
	for _, d := range dirs {
		if d.offline != nil {
			opts.Logger.Error("log directory offline at start", "component", "storage", "dir", d.path, "err", d.offline)
		}
	}
	m.SetCleaner(CleanerSettings{MapMemory: cfg.CleanerMapMemory, Paused: cfg.CleanerPaused, IOBytesPerSecond: cfg.CleanerIOBytesPerSecond})
	m.mu.logs = map[model.TopicPartition]*Log{}
	m.mu.futures = map[model.TopicPartition]*Log{}
	m.mu.where = where
	m.mu.preferred = map[model.TopicPartition]int{}
	return m, nil
}

// Start runs the background work until Close.
func (m *Manager) Start(ctx context.Context) {
	m.tasks = task.NewGroup(ctx)
	m.tasks.Every(m.cfg.RetentionCheckInterval, func(context.Context) { m.each("retention", m.retain) })
	m.tasks.Every(m.cfg.FlushCheckInterval, func(context.Context) { m.eachWithFutures("flush", (*Log).FlushIfDue) })
	m.tasks.Every(m.cfg.CheckpointInterval, func(context.Context) { m.eachWithFutures("checkpoint", (*Log).Checkpoint) })
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

// each runs fn on every open log of a current replica, logging failures:
// one bad log must not stop the others' retention or flushing. Future
// replicas (move.go) follow their current one's retention and cleaning by
// copying it, so only eachWithFutures reaches them.
func (m *Manager) each(what string, fn func(*Log) error) {
	m.eachOf(what, m.Logs(), fn)
}

// eachWithFutures is each over future replicas too (flushes, checkpoints).
func (m *Manager) eachWithFutures(what string, fn func(*Log) error) {
	m.eachOf(what, append(m.Logs(), m.Futures()...), fn)
}

func (m *Manager) eachOf(what string, logs []*Log, fn func(*Log) error) {
	for _, l := range logs {
		if err := fn(l); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrLogFailed) {
			m.opts.Logger.Error(what+" failed", "component", "storage", "dir", l.dir, "err", err)
		}
	}
}

// OpenFiles is how many files the logs hold open (a segment holds one).
func (m *Manager) OpenFiles() int64 { return m.files.OpenFiles() }

// MaxOpenFiles is the most files the logs may hold open before a new log
// is refused (ManagerConfig.MaxOpenFiles), 0 when there is no budget.
func (m *Manager) MaxOpenFiles() int64 { return max(m.cfg.MaxOpenFiles, 0) }

// Stats are the counts of the Manager's logs' work, for metrics.
func (m *Manager) Stats() *Stats { return m.opts.Stats }

// Dirs are the data directories in log.dirs order, with their state.
func (m *Manager) Dirs() []DirState {
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	out := make([]DirState, len(m.dirs))
	for i, d := range m.dirs {
		out[i] = DirState{Path: d.path, Offline: d.offline}
	}
	return out
}

// dirIndex is the index of a data directory given by path, -1 if none.
func (m *Manager) dirIndex(path string) int {
	clean := filepath.Clean(path)
	for i, d := range m.dirs {
		if filepath.Clean(d.path) == clean {
			return i
		}
	}
	return -1
}

// online reports whether data directory i serves.
func (m *Manager) online(i int) bool {
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	return m.dirs[i].offline == nil
}

// PartitionDir is the directory of a partition's current replica, where
// it is or, for a replica not created yet, where it would be placed now.
func (m *Manager) PartitionDir(tp model.TopicPartition) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.mu.where.current[tp]
	if !ok {
		i = m.placeLocked(tp, -1)
	}
	if i < 0 {
		i = 0
	}
	return filepath.Join(m.dirs[i].path, tp.String())
}

// DirOf is the data directory holding the partition's current replica.
func (m *Manager) DirOf(tp model.TopicPartition) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.mu.where.current[tp]
	if !ok {
		return "", false
	}
	return m.dirs[i].path, true
}

// placeLocked chooses the data directory for a new replica of tp: the
// preferred one (AlterReplicaLogDirs's, else want) when online, else the
// online one holding the fewest replicas, current and future, the first
// in log.dirs order on a tie (Kafka's LogManager.nextLogDirs). -1 when
// every directory is offline.
func (m *Manager) placeLocked(tp model.TopicPartition, want int) int {
	if p, ok := m.mu.preferred[tp]; ok && m.online(p) {
		return p
	}
	if want >= 0 && want < len(m.dirs) && m.online(want) {
		return want
	}
	counts := make([]int, len(m.dirs))
	for _, i := range m.mu.where.current {
		counts[i]++
	}
	for _, f := range m.mu.where.future {
		counts[f.dir]++
	}
	best := -1
	for i := range m.dirs {
		if m.online(i) && (best < 0 || counts[i] < counts[best]) {
			best = i
		}
	}
	return best
}

// Prefer remembers dir as where tp's replica goes when it is created
// (AlterReplicaLogDirs for a replica this broker does not have yet).
func (m *Manager) Prefer(tp model.TopicPartition, dir string) error {
	i := m.dirIndex(dir)
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrLogDirNotFound, dir)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.preferred[tp] = i
	return nil
}

// logOptions are the options of a log in data directory i: its I/O
// errors take the directory offline.
func (m *Manager) logOptions(i int) Options {
	o := m.opts
	o.OnIOError = func(err error) { m.markOffline(i, err) }
	return o
}

// OpenLog returns the partition's log, opening (and recovering) it where
// it is, or creating it in the directory placeLocked picks. An existing
// future replica of it (a move that a restart interrupted) is opened too,
// for the broker to resume (Future). A replica whose directory is offline
// is ErrLogDirOffline.
func (m *Manager) OpenLog(tp model.TopicPartition, cfg Config) (*Log, error) {
	return m.OpenLogIn(tp, cfg, "")
}

// OpenLogIn is OpenLog placing a new replica in dir when that is one of
// the data directories and online (the directory the metadata assigns the
// replica to); "" leaves the choice to placement.
func (m *Manager) OpenLogIn(tp model.TopicPartition, cfg Config, dir string) (*Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	if l, ok := m.mu.logs[tp]; ok {
		return l, nil
	}
	if n := m.files.OpenFiles(); m.cfg.MaxOpenFiles > 0 && n >= m.cfg.MaxOpenFiles {
		return nil, fmt.Errorf("%w: %s not opened: the logs hold %d files open, their most (%d, three quarters of the open-files limit unless set); raise the limit (ulimit -n) or delete partitions",
			ErrTooManyOpenFiles, tp, n, m.cfg.MaxOpenFiles)
	}
	i, exists := m.mu.where.current[tp]
	if !exists {
		want := -1
		if dir != "" {
			want = m.dirIndex(dir)
		}
		if i = m.placeLocked(tp, want); i < 0 {
			return nil, fmt.Errorf("%w: no online log directory for %s", ErrLogDirOffline, tp)
		}
	}
	if !m.online(i) {
		return nil, fmt.Errorf("%w: %s is in %s", ErrLogDirOffline, tp, m.dirs[i].path)
	}
	l, err := Open(filepath.Join(m.dirs[i].path, tp.String()), cfg, m.logOptions(i))
	if err != nil {
		if IsIOError(err) {
			m.markOffline(i, err)
		}
		return nil, fileLimitError(err)
	}
	m.mu.logs[tp] = l
	m.mu.where.current[tp] = i
	delete(m.mu.preferred, tp)
	if f, ok := m.mu.where.future[tp]; ok && m.online(f.dir) {
		fl, err := Open(filepath.Join(m.dirs[f.dir].path, f.name), cfg, m.logOptions(f.dir))
		if err != nil {
			m.opts.Logger.Warn("dropping a future replica that does not open; the move starts again if asked", "component", "storage",
				"partition", tp.String(), "dir", m.dirs[f.dir].path, "err", err)
			_ = removeDurably(m.opts.FS, m.dirs[f.dir].path, f.name)
			delete(m.mu.where.future, tp)
		} else {
			m.mu.futures[tp] = fl
		}
	}
	return l, nil
}

// Log returns an open log.
func (m *Manager) Log(tp model.TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.mu.logs[tp]
	return l, ok
}

// Logs returns the open logs of every current replica.
func (m *Manager) Logs() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.mu.logs))
	for _, l := range m.mu.logs {
		out = append(out, l)
	}
	return out
}

// Futures returns the open logs of every future replica (move.go).
func (m *Manager) Futures() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.mu.futures))
	for _, l := range m.mu.futures {
		out = append(out, l)
	}
	return out
}

// OnDisk lists the partitions that have a replica in an online data
// directory, current or future, open or not, sorted by topic then
// partition so callers (and restarts) see a stable order.
func (m *Manager) OnDisk() ([]model.TopicPartition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[model.TopicPartition]bool{}
	var out []model.TopicPartition
	add := func(tp model.TopicPartition, i int) {
		if !seen[tp] && m.online(i) {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	for tp, i := range m.mu.where.current {
		add(tp, i)
	}
	for tp, f := range m.mu.where.future {
		add(tp, f.dir)
	}
	slices.SortFunc(out, func(x, y model.TopicPartition) int {
		return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
	})
	return out, nil
}

// DeleteLog closes the partition's logs (if open) and removes their
// directories: the future replica first, so a crash between the two never
// leaves a future replica without its current one.
func (m *Manager) DeleteLog(tp model.TopicPartition) error {
	m.mu.Lock()
	l, ok := m.mu.logs[tp]
	fl, fok := m.mu.futures[tp]
	f, hasFuture := m.mu.where.future[tp]
	i, exists := m.mu.where.current[tp]
	delete(m.mu.logs, tp)
	delete(m.mu.futures, tp)
	delete(m.mu.where.future, tp)
	delete(m.mu.where.current, tp)
	delete(m.mu.preferred, tp)
	m.mu.Unlock()
	var err error
	if fok {
		err = fl.Close()
	}
	if hasFuture && m.online(f.dir) {
		err = errors.Join(err, removeDurably(m.opts.FS, m.dirs[f.dir].path, f.name))
	}
	if ok {
		err = errors.Join(err, l.Close())
	}
	if exists && m.online(i) {
		err = errors.Join(err, removeDurably(m.opts.FS, m.dirs[i].path, tp.String()))
	}
	if err != nil {
		return fmt.Errorf("storage: delete %s: %w", tp, err)
	}
	return nil
}

// Close stops the background work, closes every log cleanly, and then
// releases the data directories' locks.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closed = true
	logs := m.mu.logs
	futures := m.mu.futures
	m.mu.logs = map[model.TopicPartition]*Log{}
	m.mu.futures = map[model.TopicPartition]*Log{}
	m.mu.Unlock()
	if m.tasks != nil {
		m.tasks.Stop()
	}
	var err error
	for _, l := range futures {
		err = errors.Join(err, l.Close())
	}
	for _, l := range logs {
		err = errors.Join(err, l.Close())
	}
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	return errors.Join(err, closeDirs(m.dirs))
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
