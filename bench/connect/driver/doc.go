// Command driver is the Connect benchmark of issue 18 (bench/connect/run.sh,
// docs/PERFORMANCE.md#connect): one Samsa broker, then for each runtime
// (`samsa connect --standalone`, Apache Kafka's ConnectStandalone) and each
// run a fresh worker process given a FileStreamSource (input file → topic)
// and a FileStreamSink (topic → output file) through its REST API. It times
// connector creation until the topic's end offset reaches N (source only)
// and until the output file holds all N lines (end to end), samples the
// worker's RSS and CPU time from /proc, checks the output equals the input
// line for line, and prints the medians with the Samsa/Java ratios.
package main
