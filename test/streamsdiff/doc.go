// Package streamsdiff is the differential test of Samsa's streams library
// against Kafka Streams 4.4 (issue 19): six topologies (word count;
// tumbling windows with grace and suppression, hopping and sliding
// windows; session windows; windowed stream-stream joins; stream-table and
// stream-global-table joins; foreign-key table joins) written once with
// Kafka Streams from Maven Central (java/, run by java/run.sh) and once
// with Samsa's library (samsa_topologies_test.go), each run on a Samsa broker
// of its own with the same input (inputs.go: out-of-order and late
// records, null keys, tombstones, foreign-key changes), their output
// records compared per key. TestJavaReference checks the Kafka Streams
// run against hand-derived facts, so the data is known to exercise the
// semantics. docs/streams/DIFFERENTIAL.md explains the data, its traps and
// how the processing order is made deterministic.
package streamsdiff
