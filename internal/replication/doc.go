// Package replication owns a broker's replicas of partitions: appends as
// leader, the high watermark, the follower's appends and truncations, and
// the waiting rooms ("purgatories") where long-polling fetches wait for
// data and acks=all produces wait for the high watermark to pass their
// batch.
//
// A Partition is the broker's only way to its log: reads, ListOffsets,
// DeleteRecords, epoch lookups, sizes and producer state all go through it
// (partition_ops.go), so the rules that depend on the replica's role and on
// the high watermark live here and nowhere else.
//
// The metadata image gives each replica its role (Partition.Apply). A
// leader answers its followers' fetches (partition_leader.go) with records
// up to its log end and a diverging epoch when their logs part from its
// own; its LeaderState, a pure state machine, turns the followers' fetch
// offsets into the high watermark and ISR proposals, which the broker sends
// to the controller. A follower appends what it fetched and truncates by
// leader epoch, never to its high watermark alone (partition_follower.go).
//
// A single node is the same code path: its partition's ISR is its leader
// alone, so each append moves the high watermark to the log end (in durable
// mode, the fsynced end).
package replication
