// Package kafkanode is how the benchmark drivers (bench/compare,
// bench/share) run Apache Kafka from the jars bench/compare/run.sh fetches
// from Maven Central: the combined (broker and KRaft controller) node's
// server.properties, the storage format, the JVM command line of
// kafka-server-start.sh, and a single plaintext node on free loopback ports
// started and waited for.
package kafkanode
