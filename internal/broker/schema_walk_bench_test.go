package broker

import (
	"context"
	"testing"

	"github.com/samsa-io/samsa/internal/config"
)

// BenchmarkSchemaWalk: the per-record cost of the check alone (no batch,
// no network), 100 records of one registered ID a walk, the answers from
// memory.
func BenchmarkSchemaWalk(b *testing.B) {
	for _, c := range []struct {
		name, strategy string
		value          []byte
	}{
		{"topic-name", config.TopicNameStrategy, wire(1, "payload")},
		{"record-name-avro", config.RecordNameStrategy, wire(4, "payload")},
		{"record-name-protobuf", config.RecordNameStrategy, wire(10, "\x00payload")},
		{"record-name-protobuf-nested", config.TopicRecordNameStrategy, wire(10, "\x04\x02\x00payload")},
	} {
		b.Run(c.name, func(b *testing.B) {
			chk := schemaCheck{topic: "orders", parts: [2]schemaPart{
				{what: "key", strategy: config.TopicNameStrategy},
				{on: true, what: "value", strategy: c.strategy},
			}}
			ids := testRegistry()
			b.ReportAllocs()
			for b.Loop() {
				w := newSchemaWalk(context.Background(), nil, ids, chk)
				for i := range 100 {
					w.record(i, nil, c.value)
				}
				if w.err != nil || len(w.bad) != 0 {
					b.Fatal(w.err, w.bad)
				}
			}
		})
	}
}
