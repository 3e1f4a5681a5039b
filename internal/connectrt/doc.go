// Package connectrt is Samsa's Kafka Connect runtime (issue 18): workers
// that run connectors and their tasks (the SDK in package connect), in
// Kafka's two modes. Standalone: one worker, connector configs from files or
// the REST API, source offsets in a local file. Distributed: workers that
// share a Kafka group (protocol type connect, internal/connectrt/member)
// and keep everything in three compacted topics in Kafka's formats:
// connector and task configs and target states (config.storage.topic),
// source offsets (offset.storage.topic), statuses (status.storage.topic).
//
// A worker is a Kafka client only (franz-go), so it runs against Apache
// Kafka as against Samsa. The REST API (internal/connectrt/rest) talks to
// the Herder (herder.go), which answers from the config state every worker
// reads from the config topic, writes through the group's leader (followers
// answer api.NotLeaderError and the REST layer forwards), and starts and
// stops what the group's assignment gives this worker (worker.go).
//
// Source tasks (source.go) poll, transform, convert and produce; their
// offsets are written after the records are acknowledged, or, with
// exactly.once.source.support=enabled, in the same transaction as the
// records (KIP-618). Sink tasks (sink.go) consume through a consumer group
// per connector (connect-<name>), convert, transform and put; a partition's
// offset is committed only after the task flushed it. Failures of
// converters and transforms follow errors.tolerance with retries and a dead
// letter queue (errors.go). docs/DESIGN-connect.md is the design.
package connectrt
