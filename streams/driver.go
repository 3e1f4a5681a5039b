package streams

import (
	"net/http"

	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"io"
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/streams/serde"
)

// TestDriver runs a topology without a broker (Kafka's
// TopologyTestDriver): records piped into input topics are processed at
// once, in one task per subtopology, records written to repartition topics
// are processed before the pipe returns, and the mock wall clock only moves
// when the test moves it. Output is read per topic.
type TestDriver struct {
	topo    *Topology
	bt      *builtTopology
	cfg     Config
	appID   string
	wall    int64
	tasks   []*task
	byTopic map[string]*task // source topic -> the task reading it
	outputs map[string][]outRecord
	pending []outRecord
	offsets map[string]int64
	mets    *metrics
	log     *slog.Logger
	err     error
}

// TestDriverConfig configures a TestDriver; ApplicationID defaults to
// "test-driver" and StartTime to the Unix epoch.
type TestDriverConfig struct {
	ApplicationID string
	StartTime     time.Time
	// DeserializationHandler is default.deserialization.exception.handler,
	// as in Config.
	DeserializationHandler DeserializationHandler
}

// NewTestDriver opens a driver over the topology.
func NewTestDriver(topo *Topology, c TestDriverConfig) (*TestDriver, error) {
	bt, err := topo.build()
	if err != nil {
		return nil, err
	}
	if c.ApplicationID == "" {
		c.ApplicationID = "test-driver"
	}
	d := &TestDriver{topo: topo, bt: bt, appID: c.ApplicationID, byTopic: map[string]*task{},
		outputs: map[string][]outRecord{}, offsets: map[string]int64{}, mets: newMetrics(),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if !c.StartTime.IsZero() {
		d.wall = c.StartTime.UnixMilli()
	}
	tc := &taskConfig{maxTaskIdleMs: -1, deserializationHandler: c.DeserializationHandler}
	for _, st := range bt.subtopologies {
		var parts []topicPartition
		for topic := range st.topics {
			parts = append(parts, topicPartition{d.resolveTopic(topic), 0})
		}
		resolved := &subtopology{id: st.id, nodes: st.nodes, sources: st.sources, topics: map[string]*node{}, stores: st.stores}
		for topic, n := range st.topics {
			resolved.topics[d.resolveTopic(topic)] = n
		}
		t, err := newTask(TaskID{st.id, 0}, topo, resolved, d, parts, tc)
		if err != nil {
			return nil, err
		}
		for topic := range resolved.topics {
			d.byTopic[topic] = t
		}
		d.tasks = append(d.tasks, t)
	}
	if err := d.addGlobalTasks(tc); err != nil {
		return nil, err
	}
	for _, t := range d.tasks {
		if err := t.open(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// addGlobalTasks opens the global stores, gives them to every task, and
// makes a task of each global store's source and processor, so that a
// record piped into a global topic updates the store at once (as Kafka's
// TopologyTestDriver does).
func (d *TestDriver) addGlobalTasks(tc *taskConfig) error {
	globals := map[string]any{}
	for _, name := range d.bt.globalStores {
		s, err := d.openStore(nil, d.topo.stores[name])
		if err != nil {
			return err
		}
		globals[name] = s
	}
	for _, st := range d.bt.globalGroups {
		var parts []topicPartition
		for topic := range st.topics {
			parts = append(parts, topicPartition{topic, 0})
		}
		t, err := newTask(TaskID{st.id, 0}, d.topo, st, d, parts, tc)
		if err != nil {
			return err
		}
		for topic := range st.topics {
			d.byTopic[topic] = t
		}
		d.tasks = append(d.tasks, t)
	}
	for _, t := range d.tasks {
		t.addGlobalStores(globals)
	}
	return nil
}

func (d *TestDriver) now() int64                         { return d.wall }
func (d *TestDriver) applicationID() string              { return d.appID }
func (d *TestDriver) logger() *slog.Logger               { return d.log }
func (d *TestDriver) taskMetrics(id TaskID) *taskMetrics { return d.mets.forTask(id) }
func (d *TestDriver) partitions(string) (int32, error)   { return 1, nil }

func (d *TestDriver) resolveTopic(name string) string {
	if _, ok := d.topo.internalTopics[name]; ok {
		return d.appID + "-" + name
	}
	return name
}

func (d *TestDriver) send(r outRecord) error {
	d.outputs[r.topic] = append(d.outputs[r.topic], r)
	if _, ok := d.byTopic[r.topic]; ok {
		d.pending = append(d.pending, r)
	}
	return nil
}

func (d *TestDriver) openStore(t *task, def *storeDef) (any, error) { return openMemoryStore(def) }

// openMemoryStore opens the in-memory store of a kind (the test driver's
// stores).
func openMemoryStore(def *storeDef) (any, error) {
	switch def.kind {
	case keyValueStore:
		return newMemKV(def), nil
	case windowStore:
		if def.retainDuplicates {
			return newMemJoinWindow(def), nil
		}
		return newMemWindow(def), nil
	case sessionStore:
		return newMemSession(def), nil
	case suppressionBuffer:
		return newTimeOrderedBuffer(def), nil
	case listValueStore:
		return newMemOuterJoin(def), nil
	case subscriptionStore:
		return newMemSubscriptions(def), nil
	}
	return nil, fmt.Errorf("streams: the test driver cannot open store %s of this kind yet", def.name)
}

// pipe feeds one serialized record to the task reading topic, then
// everything it wrote to internal topics, until nothing is left.
func (d *TestDriver) pipe(topic string, in inRecord) error {
	if d.err != nil {
		return d.err
	}
	t, ok := d.byTopic[topic]
	if !ok {
		return fmt.Errorf("streams: no source of the topology reads topic %q", topic)
	}
	queue := []outRecord{{topic: topic, key: in.key, value: in.value, ts: in.timestamp, headers: in.headers}}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		t = d.byTopic[r.topic]
		off := d.offsets[r.topic]
		d.offsets[r.topic] = off + 1
		tp := topicPartition{r.topic, 0}
		if err := t.addRecords(tp, []inRecord{{offset: off, key: r.key, value: r.value, timestamp: r.ts, headers: r.headers}}, 0); err != nil {
			d.err = err
			return err
		}
		if _, err := t.process(1 << 30); err != nil {
			d.err = err
			return err
		}
		queue = append(queue, d.pending...)
		d.pending = d.pending[:0]
	}
	return nil
}

// AdvanceWallClockTime moves the mock wall clock and runs the wall-clock
// punctuations that come due.
func (d *TestDriver) AdvanceWallClockTime(by time.Duration) error {
	d.wall += by.Milliseconds()
	for _, t := range d.tasks {
		if err := t.punctuate(WallClockTime, d.wall); err != nil {
			return err
		}
	}
	return d.drain()
}

func (d *TestDriver) drain() error {
	for len(d.pending) > 0 {
		r := d.pending[0]
		d.pending = d.pending[1:]
		if err := d.pipe(r.topic, inRecord{key: r.key, value: r.value, timestamp: r.ts, headers: r.headers}); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the processors.
func (d *TestDriver) Close() error {
	var errs []error
	for _, t := range d.tasks {
		errs = append(errs, t.close())
	}
	return errors.Join(errs...)
}

// InputTopic pipes typed records into a topic of a TestDriver.
type InputTopic[K, V any] struct {
	d          *TestDriver
	topic      string
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
}

// NewInputTopic returns a pipe into topic.
func NewInputTopic[K, V any](d *TestDriver, topic string, ks serde.Serde[K], vs serde.Serde[V]) *InputTopic[K, V] {
	return &InputTopic[K, V]{d: d, topic: topic, keySerde: ks, valueSerde: vs}
}

// Pipe processes one record with the given timestamp.
func (in *InputTopic[K, V]) Pipe(key K, value V, ts int64) error {
	return in.PipeRecord(Record[K, V]{Key: key, Value: value, Timestamp: ts})
}

// PipeRecord processes one record (NullKey/NullValue make nulls).
func (in *InputTopic[K, V]) PipeRecord(r Record[K, V]) error {
	var kb, vb []byte
	var err error
	if !r.NullKey {
		if kb, err = in.keySerde.Serialize(in.topic, r.Key); err != nil {
			return err
		}
		if kb == nil {
			kb = []byte{}
		}
	}
	if !r.NullValue {
		if vb, err = in.valueSerde.Serialize(in.topic, r.Value); err != nil {
			return err
		}
		if vb == nil {
			vb = []byte{}
		}
	}
	return in.d.pipe(in.topic, inRecord{key: kb, value: vb, timestamp: r.Timestamp, headers: r.Headers})
}

// OutputTopic reads what a topology wrote to a topic.
type OutputTopic[K, V any] struct {
	d          *TestDriver
	topic      string
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	read       int
}

// NewOutputTopic reads topic from its start.
func NewOutputTopic[K, V any](d *TestDriver, topic string, ks serde.Serde[K], vs serde.Serde[V]) *OutputTopic[K, V] {
	return &OutputTopic[K, V]{d: d, topic: topic, keySerde: ks, valueSerde: vs}
}

// IsEmpty says whether every record written so far was read.
func (o *OutputTopic[K, V]) IsEmpty() bool { return o.read >= len(o.d.outputs[o.topic]) }

// ReadRecord returns the next record, or an error when there is none.
func (o *OutputTopic[K, V]) ReadRecord() (Record[K, V], error) {
	recs := o.d.outputs[o.topic]
	if o.read >= len(recs) {
		return Record[K, V]{}, fmt.Errorf("streams: no more records in %s", o.topic)
	}
	r := recs[o.read]
	o.read++
	out := Record[K, V]{Timestamp: r.ts, Headers: r.headers, NullKey: r.key == nil, NullValue: r.value == nil}
	var err error
	if r.key != nil {
		if out.Key, err = o.keySerde.Deserialize(o.topic, r.key); err != nil {
			return out, err
		}
	}
	if r.value != nil {
		if out.Value, err = o.valueSerde.Deserialize(o.topic, r.value); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ReadRecords returns every record not read yet.
func (o *OutputTopic[K, V]) ReadRecords() ([]Record[K, V], error) {
	var out []Record[K, V]
	for !o.IsEmpty() {
		r, err := o.ReadRecord()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// MetricsHandler serves the driver's metrics (records processed, skipped
// and dropped, punctuations) in Prometheus' text format, as App's does.
func (d *TestDriver) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(d.mets.reg, promhttp.HandlerOpts{})
}
