package examples_test

import (
	"fmt"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// driver opens a TestDriver over a topology built by one of the examples.
func driver(topo *streams.Topology, err error) *streams.TestDriver {
	if err != nil {
		panic(err)
	}
	d, err := streams.NewTestDriver(topo, streams.TestDriverConfig{ApplicationID: "example"})
	if err != nil {
		panic(err)
	}
	return d
}

// pipe sends records to a topic; a failing pipe stops the example.
func pipe[K, V any](in *streams.InputTopic[K, V], recs ...streams.Record[K, V]) {
	for _, r := range recs {
		if err := in.PipeRecord(r); err != nil {
			panic(err)
		}
	}
}

// rec is a record with a key, a value and a timestamp in milliseconds.
func rec[K, V any](key K, value V, ts int64) streams.Record[K, V] {
	return streams.Record[K, V]{Key: key, Value: value, Timestamp: ts}
}

// printTopic prints what the topology wrote to topic, one record a line:
// key, value (null for a tombstone) and timestamp.
func printTopic[K, V any](d *streams.TestDriver, topic string, ks serde.Serde[K], vs serde.Serde[V]) {
	recs, err := streams.NewOutputTopic(d, topic, ks, vs).ReadRecords()
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		var v any = r.Value
		if r.NullValue {
			v = "null"
		}
		fmt.Printf("%s: %v = %v @%d\n", topic, key(r.Key), v, r.Timestamp)
	}
}

// key prints windowed keys with their window: [start,end) for time
// windows, which end before their end, [start,end] for sessions, which
// include it.
func key(k any) string {
	switch w := k.(type) {
	case timeWindowed:
		return fmt.Sprintf("%s[%d,%d)", w.Key, w.Window.Start, w.Window.End)
	case sessionWindowed:
		return fmt.Sprintf("%s[%d,%d]", w.Key, w.Window.Start, w.Window.End)
	}
	return fmt.Sprint(k)
}

// timeWindowed and sessionWindowed tell key how to print a window.
type (
	timeWindowed    serde.Windowed[string]
	sessionWindowed serde.Windowed[string]
)

// timeWindowedSerde reads keys of time windows of size.
func timeWindowedSerde(size int64) serde.Serde[timeWindowed] {
	inner := serde.TimeWindowed(serde.String(), size)
	return serde.Func(func(topic string, w timeWindowed) ([]byte, error) {
		return inner.Serialize(topic, serde.Windowed[string](w))
	}, func(topic string, b []byte) (timeWindowed, error) {
		w, err := inner.Deserialize(topic, b)
		return timeWindowed(w), err
	})
}

// sessionWindowedSerde reads keys of session windows.
func sessionWindowedSerde() serde.Serde[sessionWindowed] {
	inner := serde.SessionWindowed(serde.String())
	return serde.Func(func(topic string, w sessionWindowed) ([]byte, error) {
		return inner.Serialize(topic, serde.Windowed[string](w))
	}, func(topic string, b []byte) (sessionWindowed, error) {
		w, err := inner.Deserialize(topic, b)
		return sessionWindowed(w), err
	})
}
