package streams

import (
	"time"
)

// Processor is the low-level Processor API (Kafka's
// org.apache.kafka.streams.processor.api.Processor): one instance per task
// and node, Init before the first record, Close when the task closes.
type Processor[KIn, VIn, KOut, VOut any] interface {
	Init(ctx ProcessorContext[KOut, VOut]) error
	Process(r Record[KIn, VIn]) error
	Close() error
}

// ProcessorFunc makes a stateless Processor from a function.
type ProcessorFunc[KIn, VIn, KOut, VOut any] func(ctx ProcessorContext[KOut, VOut], r Record[KIn, VIn]) error

// PunctuationType says which clock drives a punctuation (Kafka's
// PunctuationType).
type PunctuationType int

const (
	// StreamTime punctuations fire as the task's stream time (the largest
	// record timestamp it has processed) passes each interval.
	StreamTime PunctuationType = iota
	// WallClockTime punctuations fire by the system clock, checked between
	// records.
	WallClockTime
)

func (t PunctuationType) String() string {
	if t == WallClockTime {
		return "WALL_CLOCK_TIME"
	}
	return "STREAM_TIME"
}

// RecordMetadata is where the record being processed came from. A
// punctuation has none.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ProcessorContext is what a processor can do besides returning: forward
// records downstream, schedule punctuations, reach its state stores.
type ProcessorContext[KOut, VOut any] interface {
	// Forward sends a record to every child of this processor.
	Forward(r Record[KOut, VOut])
	// ForwardTo sends a record to the named child only.
	ForwardTo(child string, r Record[KOut, VOut])
	// Schedule calls fn every interval of the given clock, with the
	// punctuation's timestamp. The returned function cancels it.
	Schedule(interval time.Duration, typ PunctuationType, fn func(timestamp int64)) (cancel func())
	// StateStore returns a store connected to this processor; use the typed
	// accessors (KeyValueStoreOf, WindowStoreOf, SessionStoreOf).
	StateStore(name string) (any, error)
	// TaskID is the task this processor instance runs in.
	TaskID() TaskID
	// RecordMetadata is the source of the record being processed.
	RecordMetadata() (RecordMetadata, bool)
	// StreamTime is the task's stream time, -1 before the first record.
	StreamTime() int64
	// WallClockTime is the system time in milliseconds as the task sees it
	// (the test driver's mock clock under test).
	WallClockTime() int64
	// ApplicationID is the application.id.
	ApplicationID() string
	// Commit asks for a commit as soon as possible.
	Commit()
}

// processor is a node's runtime behaviour: the DSL's processors implement it
// directly on untyped records; user processors are adapted to it.
type processor interface {
	init(nc *nodeContext) error
	process(r rec) error
	close() error
}

// userProcessor adapts a typed Processor to the runtime.
type userProcessor[KIn, VIn, KOut, VOut any] struct {
	p Processor[KIn, VIn, KOut, VOut]
}

func (u *userProcessor[KIn, VIn, KOut, VOut]) init(nc *nodeContext) error {
	return u.p.Init(typedContext[KOut, VOut]{nc})
}

func (u *userProcessor[KIn, VIn, KOut, VOut]) process(r rec) error {
	return u.p.Process(typed[KIn, VIn](r))
}

func (u *userProcessor[KIn, VIn, KOut, VOut]) close() error { return u.p.Close() }

type funcProcessor[KIn, VIn, KOut, VOut any] struct {
	fn  ProcessorFunc[KIn, VIn, KOut, VOut]
	ctx typedContext[KOut, VOut]
}

func (f *funcProcessor[KIn, VIn, KOut, VOut]) Init(ctx ProcessorContext[KOut, VOut]) error {
	f.ctx = ctx.(typedContext[KOut, VOut])
	return nil
}
func (f *funcProcessor[KIn, VIn, KOut, VOut]) Process(r Record[KIn, VIn]) error {
	return f.fn(f.ctx, r)
}
func (f *funcProcessor[KIn, VIn, KOut, VOut]) Close() error { return nil }

// typedContext is a node's context as a user processor sees it.
type typedContext[KOut, VOut any] struct{ nc *nodeContext }

func (c typedContext[KOut, VOut]) Forward(r Record[KOut, VOut]) { c.nc.forwardUser(untyped(r), "") }
func (c typedContext[KOut, VOut]) ForwardTo(child string, r Record[KOut, VOut]) {
	c.nc.forwardUser(untyped(r), child)
}
func (c typedContext[KOut, VOut]) Schedule(interval time.Duration, typ PunctuationType, fn func(int64)) func() {
	return c.nc.schedule(interval, typ, fn)
}
func (c typedContext[KOut, VOut]) StateStore(name string) (any, error) { return c.nc.store(name) }
func (c typedContext[KOut, VOut]) TaskID() TaskID                      { return c.nc.task.id }
func (c typedContext[KOut, VOut]) RecordMetadata() (RecordMetadata, bool) {
	return c.nc.task.recordMetadata()
}
func (c typedContext[KOut, VOut]) StreamTime() int64     { return c.nc.task.streamTime }
func (c typedContext[KOut, VOut]) WallClockTime() int64  { return c.nc.task.env.now() }
func (c typedContext[KOut, VOut]) ApplicationID() string { return c.nc.task.env.applicationID() }
func (c typedContext[KOut, VOut]) Commit()               { c.nc.task.commitRequested = true }
