// Package mirror is Apache Kafka's MirrorMaker 2 as Kafka Connect runs it:
// MirrorSourceConnector, MirrorCheckpointConnector and
// MirrorHeartbeatConnector by Kafka's class names and connector configs
// (source.cluster.alias, source.cluster.bootstrap.servers, topics, groups,
// offset.lag.max...), on Samsa's Connect runtime, distributed or
// standalone. The worker's Kafka cluster is the target.
//
// It owns the three connectors and their tasks: the source task copies
// its assigned source partitions to the same partitions of the remote
// topics (source offsets {cluster, topic, partition} -> {offset}, as
// Kafka's) and writes offset syncs as the records are acknowledged; the
// checkpoint task follows the offset syncs and emits checkpoints for its
// consumer groups, committing them to idle target groups when asked; the
// heartbeat task emits heartbeats. The record formats and rules come from
// internal/mirror/mm2, the configuration from internal/mirror/mirrorconf
// (ParseConnector), the remote topics' creation and sync from
// internal/mirror (TopicSync). docs/DESIGN-mirror.md ("As Connect
// connectors") is the design.
package mirror
