// Package mm2 holds what Samsa's mirror shares with Apache Kafka's
// MirrorMaker 2 (MM2) so that either can take over from the other: the
// byte formats of MM2's internal records and the rules that decide which of
// them are written.
//
// It owns:
//
//   - the offset-sync, checkpoint and heartbeat records (Kafka's OffsetSync,
//     Checkpoint and Heartbeat classes), encoded as Kafka's protocol Struct
//     types write them, byte for byte;
//   - the source offsets MirrorSourceConnector keeps in a Connect worker's
//     offsets topic, as the JSON Connect's JsonConverter writes;
//   - SyncWriter, the source side's rule for when an offset sync is sent
//     (Kafka's OffsetSyncWriter and its PartitionState);
//   - SyncStore, the checkpoint side's memory of offset syncs and its
//     translation of an upstream group offset to a downstream one (Kafka's
//     OffsetSyncStore, with KAFKA-14666's sparse array of older syncs);
//   - Checkpoints, the checkpoints already written per group and partition
//     and the filter that keeps new ones from moving backwards (Kafka's
//     CheckpointStore and MirrorCheckpointTask).
//
// Everything here is pure: no clients, no goroutines, no clock. The mirror's
// runtime (package mirror) reads and writes the topics and feeds these types
// in the order Kafka's tasks would. docs/mirror/mm2-formats.md describes the
// formats and rules with the Kafka classes they come from.
package mm2
