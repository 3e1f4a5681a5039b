// Package kafkaref runs the real Apache Kafka side of tests that compare
// Samsa with it: single-node Apache Kafka clusters (KRaft, broker and
// controller in one JVM) on free loopback ports, Kafka's own MirrorMaker 2
// in dedicated mode, and MirrorMaker 2's RemoteClusterUtils.translateOffsets
// in a JVM of its own. The jars come from Maven Central once (the broker's
// from bench/compare/kafka/pom.xml, into bench/compare's cache; the
// mirror's from pom.xml here, into the compatibility suites' cache) and
// every process stops when the test ends. records.go decodes MirrorMaker
// 2's internal records (offset syncs, checkpoints, heartbeats).
//
// TestKafkaToKafkaMM2 proves the library on an A->B mirror and keeps what
// MirrorMaker 2 created as testdata/mm2-a-to-b.txt, the reference for
// Samsa's mirror (issue 20). TestKafkaShareGroupState runs a share group
// and requires internal/share to decode and re-encode, byte for byte, every
// __share_group_state record Kafka wrote (issue 21). README.md lists the
// environment variables.
package kafkaref
