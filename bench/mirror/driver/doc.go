// Command driver is the mirroring benchmark of issue 20 (bench/mirror/run.sh,
// docs/PERFORMANCE.md#mirroring): Samsa's `samsa mirror` against Apache
// Kafka's MirrorMaker 2 (dedicated mode, one JVM) with the same
// mm2.properties, between two Samsa brokers on free loopback ports. The
// source A is started once and preloaded with N records; each run gets a
// fresh target B and a fresh, empty "live" topic on A. It times the mirror
// from its start until B's A.<topic> holds all N (read by a read_committed
// consumer on B), then produces to the live topic at a fixed rate with the
// produce time in a header and takes the percentiles of arrival on B minus
// produce time; it samples the mirror process's CPU time and RSS from /proc
// and prints medians of the runs with the Samsa/MM2 ratios.
package main
