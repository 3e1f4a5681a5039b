package streams

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// BufferConfig bounds Suppress's buffer (Kafka's Suppressed.BufferConfig):
// by records, by bytes (Kafka's estimate of the serialized keys, values and
// record metadata), and what to do when it is full.
type BufferConfig struct {
	maxRecords, maxBytes int64
	emitEarly            bool
	loggingDisabled      bool
	logConfig            map[string]string
}

// Unbounded is a buffer without bounds (Kafka's BufferConfig.unbounded()):
// it grows until the records are due, and fails the application if memory
// runs out.
func Unbounded() BufferConfig {
	return BufferConfig{maxRecords: math.MaxInt64, maxBytes: math.MaxInt64}
}

// MaxRecords is a buffer of at most n records that emits the oldest
// records early when full (Kafka's BufferConfig.maxRecords).
func MaxRecords(n int64) BufferConfig {
	return BufferConfig{maxRecords: n, maxBytes: math.MaxInt64, emitEarly: true}
}

// MaxBytes is a buffer of at most n bytes that emits the oldest records
// early when full (Kafka's BufferConfig.maxBytes).
func MaxBytes(n int64) BufferConfig {
	return BufferConfig{maxRecords: math.MaxInt64, maxBytes: n, emitEarly: true}
}

// WithMaxRecords bounds the buffer's records too.
func (c BufferConfig) WithMaxRecords(n int64) BufferConfig { c.maxRecords = n; return c }

// WithMaxBytes bounds the buffer's bytes too.
func (c BufferConfig) WithMaxBytes(n int64) BufferConfig { c.maxBytes = n; return c }

// EmitEarlyWhenFull emits the oldest records before they are due when the
// buffer is full: results may then not be final.
func (c BufferConfig) EmitEarlyWhenFull() BufferConfig { c.emitEarly = true; return c }

// ShutDownWhenFull fails the application when the buffer is full rather
// than emit a result early (the strict buffer Kafka's untilWindowCloses
// needs).
func (c BufferConfig) ShutDownWhenFull() BufferConfig { c.emitEarly = false; return c }

// WithLoggingDisabled keeps the buffer without a changelog: a restarted
// task loses what it had buffered.
func (c BufferConfig) WithLoggingDisabled() BufferConfig { c.loggingDisabled = true; return c }

// WithLoggingEnabled sets the buffer changelog's topic configs.
func (c BufferConfig) WithLoggingEnabled(topicConfig map[string]string) BufferConfig {
	c.loggingDisabled, c.logConfig = false, topicConfig
	return c
}

// Suppressed says what Table.Suppress holds back (Kafka's Suppressed).
type Suppressed struct {
	finalResults bool
	timeLimit    int64
	buffer       BufferConfig
	name         string
}

// UntilWindowCloses emits only each window's final result, once stream
// time passes the window's end plus its grace period (for sessions, plus
// the inactivity gap too). The table must come from a windowed
// aggregation, and the buffer must not emit early.
func UntilWindowCloses(buffer BufferConfig) Suppressed {
	return Suppressed{finalResults: true, buffer: buffer}
}

// UntilTimeLimit holds each key's updates until timeLimit of stream time
// passed since its first buffered update, then emits the latest one
// (Kafka's rate limiting suppression).
func UntilTimeLimit(timeLimit time.Duration, buffer BufferConfig) Suppressed {
	return Suppressed{timeLimit: timeLimit.Milliseconds(), buffer: buffer}
}

// WithName names the suppression's node; its buffer is then named
// name + "-store" and its changelog after that.
func (s Suppressed) WithName(name string) Suppressed { s.name = name; return s }

// Suppress holds a table's updates back in a buffer and emits them later
// (Kafka's KTable#suppress, KIP-328): with UntilWindowCloses only the
// final result of each window, with UntilTimeLimit the latest update of
// each key once per time limit. Time is the suppression's own stream
// time: the largest timestamp it received, so results come out when a
// later record arrives, not by the clock.
func (t *Table[K, V]) Suppress(s Suppressed) *Table[K, V] {
	b := t.b
	name := s.name
	if name == "" {
		name = b.newName("KTABLE-SUPPRESS-")
	}
	p := &suppressProc{timeLimit: s.timeLimit, buffer: s.buffer, finalResults: s.finalResults, valueSize: func(any) int64 { return 0 }}
	if s.finalResults {
		wt := t.tn.windowedInfo()
		if wt == nil {
			b.failf("suppress %s: window close time is only defined for windowed computations; got table %s", name, t.name)
			return t
		}
		if s.buffer.emitEarly {
			b.failf("suppress %s: UntilWindowCloses needs a buffer that does not emit early: Unbounded() or ShutDownWhenFull()", name)
		}
		p.timeLimit, p.windowEnd = wt.closeAfter, wt.windowEnd
	}
	p.validate(b, name)
	// The buffer orders keys by their serialized bytes, as Kafka's.
	if ks := serdeOr(b, t.keySerde); ks != nil {
		p.keyBytes = box(ks).serialize
	}
	if t.valueSerde != nil {
		vs := box(t.valueSerde)
		p.valueSize = func(v any) int64 {
			data, _ := vs.serialize(name, v)
			return int64(len(data))
		}
	} else if s.buffer.maxBytes != math.MaxInt64 {
		var zero V
		b.failf("suppress %s: a buffer bounded by bytes needs the table's value serde; %T has no default one", name, zero)
	}
	storeName := s.name + "-store"
	if s.name == "" {
		storeName = b.newStoreName("KTABLE-SUPPRESS-")
	}
	p.storeName = storeName
	b.addStore(&storeDef{name: storeName, kind: suppressionBuffer, inMemory: true,
		logging: !s.buffer.loggingDisabled, logConfig: s.buffer.logConfig,
		keySerde: box(t.keySerde), valueSerde: box(t.valueSerde)})
	parent := t.tn
	tn := &tableNode{parent: parent, windowed: parent.windowedInfo()}
	tn.getter = suppressGetter(parent, storeName, p)
	tn.storesForGetter = func() []string { return append(parent.storesForGetter(), storeName) }
	p.tn = tn
	b.addProcessor(name, []string{t.name}, func() processor { q := *p; return &q }, storeName)
	return &Table[K, V]{b: b, name: name, keySerde: t.keySerde, valueSerde: t.valueSerde, tn: tn}
}

// validate refuses limits that cannot work.
func (p *suppressProc) validate(b *Builder, name string) {
	switch {
	case p.timeLimit < 0:
		b.failf("suppress %s: the time limit must not be negative, got %d ms", name, p.timeLimit)
	case p.buffer.maxRecords < 0 || p.buffer.maxBytes < 0:
		b.failf("suppress %s: buffer bounds must not be negative, got %d records and %d bytes", name, p.buffer.maxRecords, p.buffer.maxBytes)
	}
}

// suppressGetter is Kafka's suppression view: a buffered key reads as its
// value before the buffered updates (what downstream has seen), others
// through the parent.
func suppressGetter(parent *tableNode, storeName string, p *suppressProc) func(nc *nodeContext) (valueGetter, error) {
	return func(nc *nodeContext) (valueGetter, error) {
		g, err := parent.getter(nc)
		if err != nil {
			return nil, err
		}
		s, err := nc.task.storeFor(storeName)
		if err != nil {
			return nil, err
		}
		buf := s.(suppressBuffer)
		return func(key any) (any, int64, error) {
			kb, err := p.keyBytes(storeName, key)
			if err != nil {
				return nil, -1, err
			}
			if prior, ok := buf.priorValue(kb); ok {
				return prior, -1, nil
			}
			return g(key)
		}, nil
	}
}

// suppressProc is Kafka's KTableSuppressProcessor.
type suppressProc struct {
	nc           *nodeContext
	tn           *tableNode
	buf          suppressBuffer
	storeName    string
	buffer       BufferConfig
	finalResults bool
	// timeLimit is how long an update waits: the time limit, or for final
	// results the window's grace (plus gap for sessions) after its end.
	timeLimit int64
	windowEnd func(key any) int64
	keyBytes  func(topic string, key any) ([]byte, error)
	valueSize func(v any) int64
	observed  int64
}

func (p *suppressProc) init(nc *nodeContext) error {
	p.nc = nc
	p.observed = -1
	s, err := nc.store(p.storeName)
	if err != nil {
		return err
	}
	buf, ok := s.(suppressBuffer)
	if !ok {
		return fmt.Errorf("streams: store %s is a %T, not a suppression buffer", p.storeName, s)
	}
	p.buf = buf
	return nil
}

func (p *suppressProc) close() error { return nil }

func (p *suppressProc) process(r rec) error {
	p.observed = max(p.observed, r.ts)
	bufferTime := r.ts
	if p.finalResults {
		bufferTime = p.windowEnd(r.key)
	}
	kb, err := p.keyBytes(p.storeName, r.key)
	if err != nil {
		return fmt.Errorf("suppress %s: serializing the key: %w", p.nc.node.name, err)
	}
	c := r.value.(change)
	md, _ := p.nc.task.recordMetadata()
	p.buf.put(bufferTime, string(kb), bufferedRecord{key: r.key, newV: c.newV, oldV: c.oldV, ts: r.ts, headers: r.headers,
		md: md, newSize: p.valueSize(c.newV), oldSize: p.valueSize(c.oldV)})
	return p.enforce()
}

// enforce emits what is due, then what does not fit.
func (p *suppressProc) enforce() error {
	expiry := p.observed - p.timeLimit
	if err := p.buf.evictWhile(func() bool { return p.buf.minTimestamp() <= expiry }, p.emit); err != nil {
		return err
	}
	if !p.overCapacity() {
		return nil
	}
	if p.buffer.emitEarly {
		return p.buf.evictWhile(p.overCapacity, p.emit)
	}
	return fmt.Errorf("%s buffer exceeded its max capacity. Currently [%d/%d] records and [%d/%d] bytes",
		p.nc.node.name, p.buf.numRecords(), p.buffer.maxRecords, p.buf.bufferSize(), p.buffer.maxBytes)
}

func (p *suppressProc) overCapacity() bool {
	return int64(p.buf.numRecords()) > p.buffer.maxRecords || p.buf.bufferSize() > p.buffer.maxBytes
}

// emit forwards an evicted record with its own timestamp, headers and
// source metadata. Final results drop tombstones (Kafka's
// safeToDropTombstones: a window deleted before it closed was never
// emitted).
func (p *suppressProc) emit(e bufferedRecord) error {
	if e.newV == nil && p.finalResults {
		return nil
	}
	t := p.nc.task
	prev := t.current
	md := e.md
	t.current = &md
	defer func() { t.current = prev }()
	return p.nc.forward(rec{key: e.key, value: change{newV: e.newV, oldV: e.oldV}, ts: e.ts, headers: e.headers})
}

// suppressBuffer is Suppress's store (Kafka's TimeOrderedKeyValueBuffer):
// one record per key, evicted in the order of (buffer time, serialized
// key). A key updated again keeps its place and its prior value (Kafka's
// non-resetting semantics).
type suppressBuffer interface {
	put(bufferTime int64, keyBytes string, r bufferedRecord)
	evictWhile(pred func() bool, emit func(bufferedRecord) error) error
	minTimestamp() int64
	numRecords() int
	bufferSize() int64
	priorValue(keyBytes []byte) (any, bool)
}

// bufferedRecord is one buffered update with its record context.
type bufferedRecord struct {
	key              any
	newV, oldV       any
	ts               int64
	headers          []Header
	md               RecordMetadata
	newSize, oldSize int64
}

// timeOrderedBuffer is the in-memory suppression buffer. Kafka keeps it in
// memory too, but logs every change to a changelog it restores from; this
// one has no changelog yet (the runtime wires it through streams/state).
type timeOrderedBuffer struct {
	def     *storeDef
	entries []*bufferEntry // by (time, key)
	index   map[string]*bufferEntry
	size    int64
	// logger writes each entry's change to the changelog (nil: not logged).
	logger func(key, value []byte, ts int64)
	// logErr is the first changelog encoding error, failing the next put.
	logErr error
}

type bufferEntry struct {
	time      int64
	key       string
	rec       bufferedRecord
	prior     any
	priorSize int64
	// priorIsOld: the prior value is the first update's old value, which
	// Kafka's estimate counts once (the same array).
	priorIsOld bool
	size       int64
}

func newTimeOrderedBuffer(def *storeDef) *timeOrderedBuffer {
	return &timeOrderedBuffer{def: def, index: map[string]*bufferEntry{}}
}

// estimate is Kafka's computeRecordSize: buffer time, key, values and the
// record context (timestamp, offset, topic, partition, headers).
func (e *bufferEntry) estimate() int64 {
	n := int64(8 + len(e.key))
	n += e.priorSize + e.rec.newSize
	if !e.priorIsOld {
		n += e.rec.oldSize
	}
	n += 8 + 8 + int64(len(e.rec.md.Topic)) + 4
	for _, h := range e.rec.headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

func (b *timeOrderedBuffer) put(bufferTime int64, key string, r bufferedRecord) {
	if e, ok := b.index[key]; ok {
		b.size -= e.size
		e.rec, e.priorIsOld = r, false
		e.size = e.estimate()
		b.size += e.size
		b.noteLog(b.logEntry(e))
		return
	}
	e := &bufferEntry{time: bufferTime, key: key, rec: r, prior: r.oldV, priorSize: r.oldSize, priorIsOld: true}
	e.size = e.estimate()
	b.insert(e)
	b.noteLog(b.logEntry(e))
}

func (b *timeOrderedBuffer) noteLog(err error) {
	if err != nil && b.logErr == nil {
		b.logErr = err
	}
}

// insert places a new entry in (time, key) order.
func (b *timeOrderedBuffer) insert(e *bufferEntry) {
	b.size += e.size
	b.index[e.key] = e
	i := sort.Search(len(b.entries), func(i int) bool {
		o := b.entries[i]
		return o.time > e.time || (o.time == e.time && o.key > e.key)
	})
	b.entries = append(b.entries, nil)
	copy(b.entries[i+1:], b.entries[i:])
	b.entries[i] = e
}

func (b *timeOrderedBuffer) evictWhile(pred func() bool, emit func(bufferedRecord) error) error {
	for len(b.entries) > 0 && pred() {
		// Emitted first, removed after, as Kafka's: a lookup downstream
		// during the emit still sees the key buffered.
		e := b.entries[0]
		if err := emit(e.rec); err != nil {
			return err
		}
		b.entries = b.entries[1:]
		delete(b.index, e.key)
		b.size -= e.size
		if b.logger != nil {
			b.logger([]byte(e.key), nil, e.rec.ts)
		}
	}
	return b.logErr
}

func (b *timeOrderedBuffer) minTimestamp() int64 {
	if len(b.entries) == 0 {
		return math.MaxInt64
	}
	return b.entries[0].time
}

func (b *timeOrderedBuffer) numRecords() int   { return len(b.entries) }
func (b *timeOrderedBuffer) bufferSize() int64 { return b.size }

func (b *timeOrderedBuffer) priorValue(key []byte) (any, bool) {
	e, ok := b.index[string(key)]
	if !ok {
		return nil, false
	}
	return e.prior, true
}
