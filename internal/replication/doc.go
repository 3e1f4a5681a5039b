// Package replication owns a broker's replicas of partitions: appends as
// leader, the high watermark, and the waiting rooms ("purgatories") where
// long-polling fetches wait for data and acks=all produces wait for the high
// watermark to pass their batch.
//
// A Partition is the broker's only way to its log: reads, ListOffsets,
// DeleteRecords, epoch lookups, sizes and producer state all go through it
// (partition_ops.go), so the rules that depend on the replica's role and on
// the high watermark live here and nowhere else.
//
// On a single node the in-sync replica set is the leader alone, so the high
// watermark follows the log end (or, in durable mode, the durable end). The
// follower fetcher, ISR shrink/expand and leader-epoch truncation arrive
// with multi-broker clusters; the types here already carry leader epochs
// and the ISR so that work adds behaviour, not shape.
package replication
