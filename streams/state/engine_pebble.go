package state

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// BlockCache is pebble's block cache, shared by the persistent stores of an
// instance so that their reads share one memory budget (Kafka Streams shares
// RocksDB's block cache the same way when configured to).
type BlockCache struct {
	cache *pebble.Cache
}

// NewBlockCache returns a block cache of size bytes. Close it after the
// stores that use it.
func NewBlockCache(size int64) *BlockCache {
	return &BlockCache{cache: pebble.NewCache(size)}
}

// Close releases the cache's reference; stores still open keep theirs.
func (c *BlockCache) Close() { c.cache.Unref() }

// PebbleOptions configure a persistent store's engine.
type PebbleOptions struct {
	// BlockCache is shared between stores; nil gives the store a cache of
	// its own of DefaultBlockCacheSize.
	BlockCache *BlockCache
	// BloomBitsPerKey sizes the bloom filters of every level (0: 10, as
	// Kafka Streams' RocksDB default, about a 1% false positive rate).
	BloomBitsPerKey int
	// Logger receives pebble's errors (nil: slog.Default()); its
	// informational lines are dropped.
	Logger *slog.Logger

	fs vfs.FS // tests: a crashable in-memory filesystem
}

// DefaultBlockCacheSize is the cache of a store opened without a shared one.
const DefaultBlockCacheSize = 8 << 20

// pebbleEngine is a pebble database with an indexed batch as the open
// transaction: reads go through the batch, so they see its writes.
//
// Durability: nothing is synced per write (the changelog topic is the source
// of truth), but commit applies the batch with pebble.Sync, one WAL fsync per
// commit, so the data is on disk before the runtime writes the checkpoint
// file that claims it.
type pebbleEngine struct {
	db    *pebble.DB
	batch *pebble.Batch
	// mu orders the committed views' reads of db before close: pebble
	// must not be read once closed.
	mu     sync.RWMutex
	closed bool // guarded by mu
}

func openPebble(dir string, o PebbleOptions) (*pebbleEngine, error) {
	opts := &pebble.Options{Logger: pebbleLogger{log: o.Logger}, FS: o.fs}
	if o.BlockCache != nil {
		opts.Cache = o.BlockCache.cache
	} else {
		c := pebble.NewCache(DefaultBlockCacheSize)
		defer c.Unref() // the DB holds its own reference
		opts.Cache = c
	}
	bits := o.BloomBitsPerKey
	if bits < 0 {
		return nil, fmt.Errorf("state: bloom bits per key %d must not be negative", bits)
	}
	if bits == 0 {
		bits = 10
	}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(bits)
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("state: open pebble %s: %w", dir, err)
	}
	return &pebbleEngine{db: db, batch: db.NewIndexedBatch()}, nil
}

func (e *pebbleEngine) persistent() bool { return true }

func (e *pebbleEngine) get(key []byte) ([]byte, error) {
	v, closer, err := e.batch.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: get: %w", err)
	}
	out := cloneValue(v)
	if out == nil {
		out = []byte{}
	}
	return out, closer.Close()
}

func (e *pebbleEngine) set(key, value []byte) error {
	return e.batch.Set(key, value, nil)
}

func (e *pebbleEngine) delete(key []byte) error {
	return e.batch.Delete(key, nil)
}

func (e *pebbleEngine) deleteRange(start, end []byte) error {
	return e.batch.DeleteRange(start, end, nil)
}

func (e *pebbleEngine) commit() error {
	if e.batch.Empty() {
		return nil
	}
	if err := e.batch.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("state: commit: %w", err)
	}
	err := e.batch.Close()
	e.batch = e.db.NewIndexedBatch()
	return err
}

func (e *pebbleEngine) abort() error {
	err := e.batch.Close()
	e.batch = e.db.NewIndexedBatch()
	return err
}

func (e *pebbleEngine) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	err := e.batch.Close()
	return errors.Join(err, e.db.Close())
}

// exactCountBelow is the estimate under which approximateCount counts the
// keys exactly: a scan that size is cheap, and the tables' estimate misses
// the memtables, which hold all of a small store.
const exactCountBelow = 100_000

// approximateCount sums the tables' entries less their deletions, as
// RocksDB's estimate-num-keys that Kafka's store reports does (overwrites in
// different tables count twice); below exactCountBelow it counts exactly.
func (e *pebbleEngine) approximateCount() (int64, error) {
	return approximatePebbleCount(e.db, e.newIter)
}

func approximatePebbleCount(db *pebble.DB, newIter func(lower, upper []byte, reverse bool) (rawIter, error)) (int64, error) {
	n, err := tableEstimate(db)
	if err != nil || n >= exactCountBelow {
		return n, err
	}
	it, err := newIter(nil, nil, false)
	if err != nil {
		return 0, err
	}
	n = 0
	for ok := it.first(); ok; ok = it.next() {
		n++
	}
	return n, errors.Join(it.err(), it.close())
}

func tableEstimate(db *pebble.DB) (int64, error) {
	tables, err := db.SSTables(pebble.WithProperties())
	if err != nil {
		return 0, fmt.Errorf("state: sstables: %w", err)
	}
	var n int64
	for _, level := range tables {
		for _, t := range level {
			if t.Properties == nil {
				continue
			}
			n += int64(t.Properties.NumEntries) - 2*int64(t.Properties.NumDeletions)
		}
	}
	if n < 0 {
		n = 0
	}
	return n, nil
}

func (e *pebbleEngine) newIter(lower, upper []byte, reverse bool) (rawIter, error) {
	it, err := e.batch.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("state: iterator: %w", err)
	}
	return &pebbleIter{it: it, reverse: reverse}, nil
}

type pebbleIter struct {
	it      *pebble.Iterator
	reverse bool
	valErr  error
}

func (p *pebbleIter) first() bool {
	if p.reverse {
		return p.it.Last()
	}
	return p.it.First()
}

func (p *pebbleIter) seek(k []byte) bool {
	if p.reverse {
		// at or before k: before k's immediate successor.
		return p.it.SeekLT(append(append(make([]byte, 0, len(k)+1), k...), 0))
	}
	return p.it.SeekGE(k)
}

func (p *pebbleIter) next() bool {
	if p.reverse {
		return p.it.Prev()
	}
	return p.it.Next()
}

func (p *pebbleIter) key() []byte { return p.it.Key() }

func (p *pebbleIter) value() []byte {
	v, err := p.it.ValueAndErr()
	if err != nil {
		p.valErr = err
		return nil
	}
	return v
}

func (p *pebbleIter) err() error { return errors.Join(p.valErr, p.it.Error()) }

func (p *pebbleIter) close() error { return p.it.Close() }

// pebbleLogger drops pebble's informational lines (flushes, compactions)
// and reports its errors.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) logger() *slog.Logger {
	if l.log == nil {
		return slog.Default()
	}
	return l.log
}

func (l pebbleLogger) Infof(string, ...any) {}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.logger().Error(fmt.Sprintf(format, args...), "component", "streams/state")
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.logger().Error(fmt.Sprintf(format, args...), "component", "streams/state")
	panic(fmt.Sprintf("pebble: "+format, args...))
}

func (e *pebbleEngine) committed() engine { return committedPebble{e: e} }

// committedPebble reads the database itself, which holds only committed
// batches, under the engine's read lock.
type committedPebble struct{ e *pebbleEngine }

var errEngineClosed = errors.New("state: store closed")

func (c committedPebble) get(key []byte) ([]byte, error) {
	c.e.mu.RLock()
	defer c.e.mu.RUnlock()
	if c.e.closed {
		return nil, errEngineClosed
	}
	v, closer, err := c.e.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: get: %w", err)
	}
	out := append([]byte{}, v...)
	return out, closer.Close()
}

// newIter holds the read lock until the iterator is closed.
func (c committedPebble) newIter(lower, upper []byte, reverse bool) (rawIter, error) {
	c.e.mu.RLock()
	if c.e.closed {
		c.e.mu.RUnlock()
		return nil, errEngineClosed
	}
	it, err := c.e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		c.e.mu.RUnlock()
		return nil, fmt.Errorf("state: iterator: %w", err)
	}
	return &lockedIter{pebbleIter: pebbleIter{it: it, reverse: reverse}, unlock: c.e.mu.RUnlock}, nil
}

func (c committedPebble) approximateCount() (int64, error) {
	c.e.mu.RLock()
	defer c.e.mu.RUnlock()
	if c.e.closed {
		return 0, errEngineClosed
	}
	return approximatePebbleCount(c.e.db, func(lower, upper []byte, reverse bool) (rawIter, error) {
		it, err := c.e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return nil, err
		}
		return &pebbleIter{it: it, reverse: reverse}, nil
	})
}

func (committedPebble) set(_, _ []byte) error         { return errReadOnly }
func (committedPebble) delete([]byte) error           { return errReadOnly }
func (committedPebble) deleteRange(_, _ []byte) error { return errReadOnly }
func (committedPebble) commit() error                 { return errReadOnly }
func (committedPebble) abort() error                  { return errReadOnly }
func (committedPebble) close() error                  { return nil }
func (committedPebble) persistent() bool              { return true }
func (c committedPebble) committed() engine           { return c }

// lockedIter releases the engine's read lock when closed.
type lockedIter struct {
	pebbleIter
	unlock func()
}

func (l *lockedIter) close() error {
	if l.unlock == nil {
		return nil
	}
	err := l.pebbleIter.close()
	l.unlock()
	l.unlock = nil
	return err
}
