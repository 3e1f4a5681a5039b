package streams

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"
)

// topicPartition names one partition.
type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s-%d", tp.topic, tp.partition) }

// outRecord is a record a task writes: to a sink topic, a repartition
// topic or a changelog. partition -1 leaves it to the producer's
// partitioner (murmur2 of the key, as Kafka's).
type outRecord struct {
	topic     string
	partition int32
	key       []byte
	value     []byte
	ts        int64
	headers   []Header
}

// taskEnv is what a task needs from whatever runs it: the real runtime
// over Kafka or the test driver.
type taskEnv interface {
	now() int64
	applicationID() string
	send(r outRecord) error
	partitions(topic string) (int32, error)
	openStore(t *task, def *storeDef) (any, error)
	// resolveTopic prefixes a repartition topic's name with the
	// application.id; other names come back unchanged.
	resolveTopic(name string) string
	logger() *slog.Logger
	taskMetrics(id TaskID) *taskMetrics
}

// inRecord is a record fetched for a task, not yet deserialized.
type inRecord struct {
	offset    int64
	key       []byte
	value     []byte
	timestamp int64
	headers   []Header
}

// partitionQueue holds a source partition's records waiting to be
// processed, in offset order.
type partitionQueue struct {
	tp            topicPartition
	source        *node
	recs          []queuedRecord
	head          int
	partitionTime int64
	// lag is what is known to be on the broker past what was fetched: -1
	// unknown, 0 caught up. A task waits for a lagging empty partition
	// (Kafka's max.task.idle.ms rules, KIP-695).
	lag int64
}

type queuedRecord struct {
	r      rec
	offset int64
}

func (q *partitionQueue) empty() bool { return q.head >= len(q.recs) }

func (q *partitionQueue) headTimestamp() int64 { return q.recs[q.head].r.ts }

func (q *partitionQueue) pop() queuedRecord {
	qr := q.recs[q.head]
	q.recs[q.head] = queuedRecord{}
	q.head++
	if q.head == len(q.recs) {
		q.recs, q.head = q.recs[:0], 0
	}
	return qr
}

// punctuation is one scheduled punctuator.
type punctuation struct {
	interval  int64
	typ       PunctuationType
	next      int64
	fn        func(int64)
	node      *nodeContext
	cancelled bool
}

// task runs one subtopology for one partition: it owns the processor
// instances, the state stores and the records waiting, and knows nothing
// of Kafka clients (the runtime and the test driver feed it).
type task struct {
	id     TaskID
	topo   *Topology
	st     *subtopology
	env    taskEnv
	m      *taskMetrics
	nodes  map[string]*nodeContext
	queues map[topicPartition]*partitionQueue
	order  []*partitionQueue
	stores map[string]any

	streamTime      int64
	current         *RecordMetadata
	consumed        map[topicPartition]int64 // next offset to commit
	punctuations    []*punctuation
	commitRequested bool
	maxTaskIdle     int64 // ms; -1 never waits
	idleSince       int64 // when the task first found a partition empty, -1 if not waiting
	deserErrors     DeserializationHandler
	// forwardErr is the first error a user processor's Forward met
	// downstream: Forward returns nothing (Kafka's throws), so the task
	// fails the record with it after Process returns.
	forwardErr error
}

// nodeContext is one node's instance in a task.
type nodeContext struct {
	task     *task
	node     *node
	proc     processor
	children []*nodeContext
}

func newTask(id TaskID, topo *Topology, st *subtopology, env taskEnv, partitions []topicPartition, cfg *taskConfig) (*task, error) {
	t := &task{
		id: id, topo: topo, st: st, env: env,
		nodes:       map[string]*nodeContext{},
		queues:      map[topicPartition]*partitionQueue{},
		stores:      map[string]any{},
		streamTime:  -1,
		consumed:    map[topicPartition]int64{},
		maxTaskIdle: cfg.maxTaskIdleMs,
		idleSince:   -1,
		deserErrors: cfg.deserializationHandler,
	}
	t.m = env.taskMetrics(id)
	for _, tp := range partitions {
		src, ok := st.topics[tp.topic]
		if !ok {
			return nil, fmt.Errorf("streams: task %s got partition %s of no source", id, tp)
		}
		q := &partitionQueue{tp: tp, source: src, partitionTime: -1, lag: -1}
		t.queues[tp] = q
		t.order = append(t.order, q)
	}
	sort.Slice(t.order, func(i, j int) bool {
		a, b := t.order[i].tp, t.order[j].tp
		if a.topic != b.topic {
			return a.topic < b.topic
		}
		return a.partition < b.partition
	})
	for _, n := range st.nodes {
		nc := &nodeContext{task: t, node: n}
		switch n.kind {
		case processorNode:
			nc.proc = n.newProcessor()
		case sinkNode:
			nc.proc = &sinkProcessor{}
		}
		t.nodes[n.name] = nc
	}
	for _, n := range st.nodes {
		nc := t.nodes[n.name]
		for _, c := range n.children {
			nc.children = append(nc.children, t.nodes[c.name])
		}
	}
	return t, nil
}

// open opens the task's stores and initializes its processors, parents
// before children as Kafka does.
func (t *task) open() error {
	for _, name := range t.st.stores {
		if _, shared := t.stores[name]; shared {
			continue // a global store, opened once for every task
		}
		s, err := t.env.openStore(t, t.topo.stores[name])
		if err != nil {
			return fmt.Errorf("streams: task %s: open store %s: %w", t.id, name, err)
		}
		t.stores[name] = s
	}
	for _, n := range t.st.nodes {
		nc := t.nodes[n.name]
		if nc.proc == nil {
			continue
		}
		if err := nc.proc.init(nc); err != nil {
			return fmt.Errorf("streams: task %s: init %s: %w", t.id, n.name, err)
		}
	}
	return nil
}

// close closes the processors; the caller closes the stores.
func (t *task) close() error {
	var errs []error
	for _, n := range t.st.nodes {
		if nc := t.nodes[n.name]; nc.proc != nil {
			if err := nc.proc.close(); err != nil {
				errs = append(errs, fmt.Errorf("streams: task %s: close %s: %w", t.id, n.name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// addRecords deserializes fetched records into the partition's queue,
// extracting their timestamps; lag is what the fetch said remains.
func (t *task) addRecords(tp topicPartition, recs []inRecord, lag int64) error {
	q := t.queues[tp]
	if q == nil {
		return fmt.Errorf("streams: task %s does not own %s", t.id, tp)
	}
	q.lag = lag
	m := t.m
	for _, in := range recs {
		key, err := q.source.keySerde.deserialize(tp.topic, in.key)
		if err == nil {
			var value any
			value, err = q.source.valueSerde.deserialize(tp.topic, in.value)
			if err == nil {
				if err := t.enqueue(q, in, key, value); err != nil {
					return err
				}
				continue
			}
		}
		if t.deserErrors == LogAndFail {
			return fmt.Errorf("streams: deserializing %s@%d (default.deserialization.exception.handler is LogAndFailExceptionHandler): %w", tp, in.offset, err)
		}
		t.env.logger().Warn("skipping a record that does not deserialize", "partition", tp.String(), "offset", in.offset, "error", err)
		m.skipped.Inc()
		t.skip(q, in.offset)
	}
	return nil
}

func (t *task) enqueue(q *partitionQueue, in inRecord, key, value any) error {
	extract := q.source.extractor
	if extract == nil {
		extract = RecordTimestamp
	}
	cr := ConsumedRecord{Topic: q.tp.topic, Partition: q.tp.partition, Offset: in.offset, Key: key, Value: value, Timestamp: in.timestamp, Headers: in.headers}
	ts, err := extract(cr, q.partitionTime)
	if err != nil {
		return err
	}
	if ts < 0 {
		t.env.logger().Warn("skipping a record with a negative timestamp", "partition", q.tp.String(), "offset", in.offset, "timestamp", ts)
		t.m.skipped.Inc()
		t.skip(q, in.offset)
		return nil
	}
	q.recs = append(q.recs, queuedRecord{r: rec{key: key, value: value, ts: ts, headers: in.headers}, offset: in.offset})
	return nil
}

// skip marks a dropped record consumed once the queue before it is
// processed: with nothing queued it is consumed now.
func (t *task) skip(q *partitionQueue, offset int64) {
	if q.empty() {
		t.consumed[q.tp] = offset + 1
		return
	}
	// A skipped record behind queued ones: committing it early could skip
	// the queued ones after a crash, so leave it to be committed with the
	// next record processed after it.
}

// buffered is how many records wait.
func (t *task) buffered() int {
	n := 0
	for _, q := range t.order {
		n += len(q.recs) - q.head
	}
	return n
}

// next picks the queue to process from: the one whose head record has the
// smallest timestamp (Kafka's PartitionGroup), or nil when the task must
// wait for an empty partition that has data on the broker.
func (t *task) next(now int64) *partitionQueue {
	var best *partitionQueue
	waiting := false
	for _, q := range t.order {
		if q.empty() {
			if len(t.order) > 1 {
				waiting = true
			}
			continue
		}
		if best == nil || q.headTimestamp() < best.headTimestamp() {
			best = q
		}
	}
	if best == nil {
		return nil
	}
	if !waiting || t.maxTaskIdle < 0 {
		t.idleSince = -1
		return best
	}
	for _, q := range t.order {
		if !q.empty() {
			continue
		}
		if q.lag != 0 {
			// Data known (or not known not) to be on the broker: fetch it
			// first rather than process out of timestamp order.
			return nil
		}
	}
	if t.maxTaskIdle == 0 {
		t.idleSince = -1
		return best
	}
	if t.idleSince < 0 {
		t.idleSince = now
	}
	if now-t.idleSince < t.maxTaskIdle {
		return nil
	}
	return best
}

// process processes up to max records, returning how many it did.
func (t *task) process(max int) (int, error) {
	n := 0
	for n < max {
		q := t.next(t.env.now())
		if q == nil {
			break
		}
		if err := t.processOne(q); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (t *task) processOne(q *partitionQueue) error {
	qr := q.pop()
	if qr.r.ts > q.partitionTime {
		q.partitionTime = qr.r.ts
	}
	if qr.r.ts > t.streamTime {
		t.streamTime = qr.r.ts
	}
	t.current = &RecordMetadata{Topic: q.tp.topic, Partition: q.tp.partition, Offset: qr.offset}
	src := t.nodes[q.source.name]
	err := src.forward(qr.r)
	if err == nil {
		err = t.forwardErr
	}
	t.forwardErr = nil
	t.current = nil
	if err != nil {
		return fmt.Errorf("streams: task %s processing %s@%d: %w", t.id, q.tp, qr.offset, err)
	}
	t.consumed[q.tp] = qr.offset + 1
	t.m.processed.Inc()
	return t.punctuate(StreamTime, t.streamTime)
}

// punctuate runs the punctuations of a clock that are due at now.
func (t *task) punctuate(typ PunctuationType, now int64) error {
	if now < 0 {
		return nil
	}
	for _, p := range t.punctuations {
		if p.cancelled || p.typ != typ {
			continue
		}
		if now < p.next {
			continue
		}
		t.current = nil
		p.fn(now)
		t.m.punctuations.Inc()
		// Kafka's PunctuationSchedule.next: one interval on from the time
		// that was due, unless time jumped past that too; then one interval
		// on from now (one punctuation per jump, not one per missed
		// interval).
		next := p.next + p.interval
		if now >= next {
			next = now + p.interval
		}
		p.next = next
	}
	live := t.punctuations[:0]
	for _, p := range t.punctuations {
		if !p.cancelled {
			live = append(live, p)
		}
	}
	t.punctuations = live
	return nil
}

func (t *task) recordMetadata() (RecordMetadata, bool) {
	if t.current == nil {
		return RecordMetadata{}, false
	}
	return *t.current, true
}

func (nc *nodeContext) forward(r rec) error {
	for _, c := range nc.children {
		if err := c.proc.process(r); err != nil {
			return err
		}
	}
	return nil
}

// forwardUser is Forward for user processors: an error downstream is kept
// for the task to fail the record with.
func (nc *nodeContext) forwardUser(r rec, child string) {
	if nc.task.forwardErr != nil {
		return
	}
	var err error
	if child == "" {
		err = nc.forward(r)
	} else {
		err = nc.forwardTo(child, r)
	}
	if err != nil {
		nc.task.forwardErr = err
	}
}

func (nc *nodeContext) forwardTo(child string, r rec) error {
	for _, c := range nc.children {
		if c.node.name == child {
			return c.proc.process(r)
		}
	}
	return fmt.Errorf("streams: %s has no child %q", nc.node.name, child)
}

func (nc *nodeContext) schedule(interval time.Duration, typ PunctuationType, fn func(int64)) func() {
	ms := interval.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	// A stream-time punctuation is scheduled at time 0, so the first record
	// fires it; a wall-clock one an interval from now (Kafka's).
	p := &punctuation{interval: ms, typ: typ, fn: fn, node: nc, next: 0}
	if typ == WallClockTime {
		p.next = nc.task.env.now() + ms
	}
	nc.task.punctuations = append(nc.task.punctuations, p)
	return func() { p.cancelled = true }
}

func (nc *nodeContext) store(name string) (any, error) {
	if !contains(nc.node.stores, name) {
		if def, ok := nc.task.topo.stores[name]; !ok || !def.global {
			return nil, fmt.Errorf("streams: processor %s is not connected to store %q", nc.node.name, name)
		}
	}
	s, ok := nc.task.stores[name]
	if !ok {
		return nil, fmt.Errorf("streams: store %q is not open in task %s", name, nc.task.id)
	}
	return s, nil
}

// sinkProcessor serializes records and hands them to the task's
// environment.
type sinkProcessor struct {
	nc *nodeContext
}

func (s *sinkProcessor) init(nc *nodeContext) error { s.nc = nc; return nil }
func (s *sinkProcessor) close() error               { return nil }

func (s *sinkProcessor) process(r rec) error {
	n := s.nc.node
	topic := s.nc.task.env.resolveTopic(n.topic)
	key, err := n.keySerde.serialize(topic, r.key)
	if err != nil {
		return fmt.Errorf("serializing the key for %s: %w", topic, err)
	}
	value, err := n.valueSerde.serialize(topic, r.value)
	if err != nil {
		return fmt.Errorf("serializing the value for %s: %w", topic, err)
	}
	partition := int32(-1)
	if n.partitioner != nil {
		count, err := s.nc.task.env.partitions(topic)
		if err != nil {
			return err
		}
		if p, ok := n.partitioner(topic, r.key, r.value, count); ok {
			if p < 0 || p >= count {
				return fmt.Errorf("the partitioner of %s chose partition %d of %d", n.name, p, count)
			}
			partition = p
		}
	}
	ts := r.ts
	if ts < 0 {
		ts = 0
	}
	return s.nc.task.env.send(outRecord{topic: topic, partition: partition, key: key, value: value, ts: ts, headers: r.headers})
}

// dropped counts a record a processor dropped.
func (t *task) dropped(why string) {
	t.m.dropped.Inc()
	_ = why
}

// storeFor returns an open store of the task by name, whether or not the
// asking node is connected to it (value getters of upstream tables).
func (t *task) storeFor(name string) (any, error) {
	s, ok := t.stores[name]
	if !ok {
		return nil, fmt.Errorf("streams: store %q is not open in task %s", name, t.id)
	}
	return s, nil
}

// taskConfig is what a task takes from the application's Config.
type taskConfig struct {
	maxTaskIdleMs          int64
	deserializationHandler DeserializationHandler
}
