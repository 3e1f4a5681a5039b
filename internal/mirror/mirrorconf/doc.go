// Package mirrorconf reads Apache Kafka MirrorMaker 2's dedicated-mode configuration
// (mm2.properties, as connect-mirror-maker.sh takes it) for `samsa mirror --config`, and owns
// MirrorMaker's naming and selection rules that the mirror runtime (internal/mirror) applies:
//
//   - Parse and ParseFile: the clusters, their connection, security and client overrides,
//     and every flow A->B with its settings resolved as Kafka resolves them (flow-level
//     A->B.name over top-level name over Kafka 4's default; per-cluster A.name only for
//     connection, security, client and worker settings, as in Kafka). Every setting is
//     either wired into the typed Config, accepted without effect and listed in
//     Config.Ignored (Connect worker plumbing Samsa has no use for), or refused by name with
//     the reason; docs/mirror/config.md lists them all.
//   - The replication policies (DefaultReplicationPolicy, IdentityReplicationPolicy): remote
//     topic names, the internal topics' names, cycle detection (IsCycle).
//   - The filters: topics, groups and topic config properties (DefaultTopicFilter,
//     DefaultGroupFilter, DefaultConfigPropertyFilter), with Kafka's default exclude lists.
//   - The ACL sync rules of MirrorSourceConnector (ShouldReplicateACL, TargetACL).
//
// It is pure: no I/O but reading the file in ParseFile, no clients, no clock. Behaviour is
// learnt from Kafka's connect/mirror and connect/mirror-client sources; the Java class or
// constant each rule follows is named beside it.
package mirrorconf
