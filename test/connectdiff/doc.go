// Package connectdiff is the differential test of Samsa's Connect worker
// against Apache Kafka's: the same sequence of REST calls (creating,
// configuring, pausing, stopping, restarting FileStream connectors, their
// offsets and topics, plugins, loggers, and the errors of each) answered
// by Kafka's ConnectDistributed (test/compat/connect/java-worker.sh, jars
// from Maven Central) and by `samsa connect`, both on a Samsa broker. The
// Java worker's answers are kept as testdata/java-*.json (go test
// -run TestJavaWorker -update records them); docs/connect/rest.md lists
// what the comparison found.
package connectdiff
