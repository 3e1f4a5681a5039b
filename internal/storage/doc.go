// Package storage is the partition log: an append-only sequence of record
// batches split into segment files named by base offset, with a sparse
// offset index and a time index per segment, kept in memory and written to
// their files when the segment rolls: a segment holds one file open.
//
// A Log appends (assigning offsets as leader, or keeping them as follower),
// reads by offset into file ranges the broker can send without copying,
// looks offsets up by timestamp, rolls segments by size and age, truncates
// (for replication), moves its start offset (DeleteRecords, retention),
// keeps the leader-epoch checkpoint, and flushes by Kafka's flush.messages /
// flush.ms or on demand through a group commit that folds concurrent sync
// requests into one fsync.
//
// On open, a log that was closed cleanly is trusted as it is; otherwise every
// segment from the last recovery point on is validated batch by batch, a
// torn tail is truncated, and indexes are rebuilt. All files go through
// internal/vfs, so crash tests can cut any write.
//
// A Manager owns the logs of the broker's data directories (several: JBOD),
// places new replicas, moves them between directories while they serve,
// takes a directory offline on an I/O error (not at the open-files limit,
// where it refuses new logs instead), and runs retention, flush.ms and
// checkpointing in the background. See docs/DESIGN-storage.md.
package storage
