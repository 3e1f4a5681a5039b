// Package tabulate is what the benchmark drivers' reports share: the
// median of runs, a median with its range as the tables print it, and a
// figure per million records.
package tabulate
