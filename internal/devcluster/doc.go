// Package devcluster runs a Samsa cluster as separate processes on one
// machine: N combined nodes (broker and controller), each a `samsa serve`
// process with its own directory, server.properties and log file, on
// consecutive or free loopback ports (a Kafka, a controller and an HTTP
// listener each, the last serving /metrics, /healthz and /readyz), forming
// one quorum over their controller listeners. `samsa dev cluster` and the multi-process tests in
// test/cluster are built on it. For tests that need one `samsa serve` of
// the code under test, BuildOnce builds cmd/samsa once per test binary and
// StartServe runs serve and waits for log lines (its listeners' bound
// addresses).
//
// It is a client of the cluster like any other tool: it writes config
// files, runs the samsa binary (storage random-uuid, storage format, serve)
// and watches the brokers over the Kafka protocol with franz-go, so it
// imports no broker internals and the processes it starts are the ones an
// operator would run.
//
// Choices worth knowing:
//
//   - Every node is formatted with one cluster ID, kept in the cluster's
//     directory with the ports (devcluster.properties), so a kept directory
//     starts the same cluster again: the quorum's stored configuration
//     names those ports.
//   - Ready means registered and unfenced: every running node's own
//     Metadata answer lists every running broker. A port that accepts
//     connections is not enough, a broker that has not caught up on the
//     metadata log is fenced and leads nothing.
//   - A child process dies with the process that started it (Pdeathsig on
//     Linux), so a test binary killed by its timeout leaves no brokers
//     behind, and it runs in a process group of its own, so a Ctrl-C at
//     the terminal reaches only `samsa dev cluster`, which then stops the
//     nodes one by one with SIGTERM (controlled shutdowns) rather than all
//     at once.
//   - Replication defaults follow the cluster's size (RF min(3, N), min ISR
//     min(2, RF)) and are written explicitly, whatever the broker's own
//     defaults are; failure detection is quick (a 3 s session), because a
//     development or test cluster is killed and restarted often.
package devcluster
