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

// key prints windowed keys with their window.
func key(k any) string {
	if w, ok := k.(serde.Windowed[string]); ok {
		return fmt.Sprintf("%s[%d,%d]", w.Key, w.Window.Start, w.Window.End)
	}
	return fmt.Sprint(k)
}
