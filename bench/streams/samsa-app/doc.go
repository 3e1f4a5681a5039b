// Command samsa-app is the Samsa side of the streams benchmark (issue 19,
// bench/streams, docs/PERFORMANCE.md#streams): the topologies of
// bench/streams/java's Bench.java, word count and a windowed count, with
// the same serdes, on Samsa's streams library, configured from the same
// properties file (streams.ParseConfig).
//
// Usage: samsa-app wordcount|windowed PROPERTIES INPUT_TOPIC OUTPUT_TOPIC
//
// Like Bench.java it prints "RUNNING" once the application runs and
// "ERROR ..." if it fails, and runs until SIGTERM or SIGINT, then closes
// (commits and leaves the group). With BENCH_STREAMS_PROFILE_DIR set it
// writes a CPU profile of the whole run to <dir>/<application.id>.cpu.pprof
// (what docs/PERFORMANCE.md's hot spots come from).
package main
