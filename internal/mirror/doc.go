// Package mirror copies topics between Kafka clusters: Samsa's `samsa
// mirror`, compatible with Apache Kafka's MirrorMaker 2 (its dedicated-mode
// configuration, its internal topics and record formats, its offset
// translation) and with an offset-preserving mode beyond it.
//
// A Mirror runs the flows (source->target) of a mirrorconf.Config. Each
// flow runs four loops, each restarted after a failure:
//
//	topics.go      the topic sync: remote topics created and grown, configs and ACLs copied
//	copy.go        the translate-mode copier (MirrorSourceTask): records to the same
//	               partitions of the remote topics, offset syncs, progress in a Kafka
//	               Connect offsets topic; at least once, or exactly once by transactions
//	preserve.go    the offset-preserving copier: raw batches appended at their source
//	               offsets to Samsa mirror topics (a Produce with model.MirrorAppendTag)
//	checkpoint.go  checkpoints and the target groups' offsets (MirrorCheckpointTask)
//	heartbeat.go   heartbeats (MirrorHeartbeatTask)
//	status.go      each partition's lag read from the clusters, and promotion
//
// It is a Kafka client only (franz-go), so it runs between any Kafka
// clusters; only the offset-preserving mode needs a Samsa target. Design:
// docs/DESIGN-mirror.md.
package mirror
