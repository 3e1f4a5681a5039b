// Package cluster holds the end-to-end tests of a replicated Samsa
// cluster run as separate processes: `samsa serve` nodes started, killed
// (SIGKILL), stopped (SIGTERM) and restarted by internal/devcluster on
// loopback ports, driven by real clients (franz-go, sarama,
// segmentio/kafka-go). The package has no code of its own outside its
// tests.
//
// The failover test records what its clients observed as a history
// (internal/history) and checks it: no acknowledged record lost, no
// duplicate, no offset with two values, no consumer going backwards or
// skipping. Its short form runs in `make test`; `make failover-soak`
// runs the long one (50 kill -9 and 20 SIGTERM of a partition leader) and
// prints the figures docs/DESIGN-cluster.md records.
package cluster
