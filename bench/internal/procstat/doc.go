// Package procstat is what the benchmark drivers (bench/connect,
// bench/streams, bench/mirror, bench/share) share to run the programs they measure and
// read their cost from /proc: child processes with their logs, CPU seconds
// (with or without waited-for children) and resident memory (current and
// peak), and the single-node `samsa serve` each runs.
package procstat
