// Package streams is a stream-processing library with Kafka Streams'
// semantics for Go: a DSL with generics (Stream, Table, GlobalTable,
// grouped and windowed aggregations, joins), the low-level Processor API
// with state stores and punctuation, and a runtime (App) that runs a
// topology as tasks over a consumer group of any Kafka cluster, at least
// once or exactly once, with state in pebble backed by changelog topics.
// TestDriver runs a topology without a broker. It is a client: it reaches
// Kafka through franz-go only. docs/DESIGN-streams.md is its design,
// docs/STREAMS.md its guide.
package streams
