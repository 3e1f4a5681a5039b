// Package cli holds the client-side commands of the samsa binary: topic
// administration (topic create|list|describe|delete|alter|alter-config|
// delete-records), consumer and share groups (group list|describe|
// reset-offsets|delete|delete-offsets), a console producer and consumer (produce, consume), load
// generators (bench produce|consume|e2e), a look at the cluster
// (cluster info|status), its operations (cluster rebalance, reassign as
// kafka-reassign-partitions.sh, add-broker, decommission, add-controller,
// remove-controller; reassign start|list|cancel), ACLs (acl create|list|delete, as kafka-acls.sh),
// users' SCRAM credentials (user create|list|delete), client quotas
// (quota describe|alter, as kafka-configs.sh --entity-type users|clients|ips)
// feature levels (feature describe|upgrade|downgrade|disable, as
// kafka-features.sh) and configs (config describe|alter, as kafka-configs.sh:
// topics, brokers, broker loggers, client metrics, and users, clients and
// ips through the quota commands' code), a Schema Registry (registry) and
// its schemas (schema register|list|get|versions|diff|check|config|mode|
// delete, over franz-go's sr client), a REST Proxy (rest: Confluent's v3 API,
// internal/restproxy). produce and consume encode and decode
// Schema Registry records with pkg/serde (schema_records.go).
//
// Every command is an ordinary Kafka client built on franz-go (kgo for
// records, kadm for administration) that dials --bootstrap-server over TCP.
// Nothing here imports broker internals, so the same commands work against
// Samsa and against any Apache Kafka cluster; the layering test in
// internal/archtest keeps it that way.
//
// Every command secures its connections the same way (security.go): TLS
// and SASL (PLAIN, SCRAM, OAUTHBEARER) from --tls*, --sasl-* and
// SAMSA_SASL_PASSWORD over a Kafka client properties file
// (--command-config, security_config.go, read with Kafka's names). The
// settings are resolved once, before the first dial, and what cannot be
// honoured is refused with the flag or property that asked for it. Key and
// trust stores are read by internal/keystore, the leaf the broker's
// listeners read theirs with (security_tls.go): JKS, PKCS12 and PEM, with
// their passwords and encrypted PEM keys, from --command-config; PEM files
// with unencrypted keys from the --tls-* flags.
//
// Output conventions: tables for people (text/tabwriter) and --json for
// machines on stdout; summaries, progress and warnings on stderr; every
// failure is a single-line error and the process exits 1. Kafka error codes
// are turned into sentences that name the topic ("topic \"x\" does not
// exist") rather than printed as bare codes.
//
// Choices worth knowing before reading produce.go, consume.go and
// bench_run.go:
//
//   - no command waits on the cluster for longer than --timeout without an
//     answer, whatever the brokers do (gone, hung, refusing). Admin requests
//     take it as their deadline; the loops that run longer (produce, consume,
//     bench) watch their own progress (watch.go) and stop when it halts for
//     --timeout, because franz-go leaves records buffered for a broker that
//     vanished, without end. produce then says how many records it read,
//     how many were acknowledged, rejected, or left without an answer.
//   - produce reads the Produce responses passing through its connections
//     (answers.go) for the broker's error messages, which franz-go does not
//     hand on, and to warn of a retriable refusal the first time it comes.
//   - SIGINT and SIGTERM end a run cleanly: consume commits and counts what
//     it printed, bench stops with "interrupted", and produce stops reading
//     but still produces the lines it has read (lines.go hands over every
//     complete line it buffered) and waits for their acknowledgements
//     before its summary.
//   - consume without --follow stops at the end of the log as it was when the
//     command started: the end offset of every partition (the high
//     watermark, or the last stable offset under read_committed) is listed
//     once up front. Records at or past it are not printed. Control records
//     (transaction markers) are kept by the client only so their offsets can
//     mark a partition as finished; they are never printed. Otherwise a
//     partition whose tail is a commit marker, or which holds only aborted
//     data under read_committed, would never look finished.
//   - the bench loops keep a fixed pool of records whose values are allocated
//     once. Each value carries a run id and the send time (monotonic
//     nanoseconds since the run started) in its first 16 bytes, so the ack
//     promise and the e2e consumer measure latency without a map lookup or an
//     allocation per record. A record returns to the pool when its promise
//     runs; the pool size bounds the records in flight.
package cli
