// Package mirrorfail runs `samsa mirror` as a process between two clusters
// under a continuous acks=all load and kills it with SIGKILL three times:
// every record the source acknowledged must be on the target exactly once,
// and at its source offset in offset-preserving mode. Both modes run
// between two Samsa brokers and with Apache Kafka 4.4 as the source.
// `make mirror-soak SOAK=3m` runs it longer.
package mirrorfail
