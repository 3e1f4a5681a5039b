// Command driver is the streams benchmark of issue 19 (bench/streams/run.sh,
// docs/PERFORMANCE.md#streams): one Samsa broker, input produced once
// (lines of words for word count, keyed longs with rising timestamps for
// a windowed count), then for each topology, each runtime (Kafka Streams,
// bench/streams/java; Samsa's library, a program of the same command line
// given by -samsa-app) and each run a fresh application (its own
// application.id, state directory and output topic) that reads the whole
// input. It times the application from RUNNING until its group has
// committed the end of the input and of its repartition topics, samples
// its RSS and CPU time from /proc, and prints the medians with the
// Samsa/Java ratios.
package main
