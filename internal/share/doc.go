// Package share owns the share-partition of KIP-932 share groups (issue 21):
// the pure state machine that says which offsets of a topic partition a
// share group has delivered, to whom, how often, and which are done with;
// and the __share_group_state record formats its state persists in.
//
// No goroutines, no I/O, no clock reads: time is passed in. A Partition is
// not safe for concurrent use; the broker holds a lock per share-partition.
// A leaf (the standard library and kerr only), so the broker, the share
// coordinator and the tools all read the same states and bytes.
//
// # Offsets and states
//
// StartOffset (Kafka's share-partition start offset, SPSO) is the first
// offset that may still be delivered; EndOffset is one past the last offset
// ever taken into flight (Kafka keeps the last offset itself). Every offset
// in [StartOffset, EndOffset) is in flight, in one of four states (the
// numbers are Kafka's, as __share_group_state stores them):
//
//	Available (0)     may be acquired; delivered DeliveryCount times so far
//	Acquired (1)      locked by one member until a deadline
//	Acknowledged (2)  accepted by a consumer: terminal
//	Archived (4)      rejected, a gap, skipped, or out of deliveries: terminal
//
// Transitions:
//
//	new (>= EndOffset) --Acquire--> Acquired, count 1 (EndOffset moves)
//	new, Skip batch or hole --Acquire--> Archived, count 0
//	Available --Acquire--> Acquired, count+1
//	Available, count >= limit --Acquire--> Archived (only after the limit was lowered)
//	Acquired --Accept--> Acknowledged
//	Acquired --Reject, Gap--> Archived
//	Acquired --Release, ReleaseMember, ExpireLocks--> Available, or Archived if count >= limit
//	Acquired --Renew--> Acquired, deadline now+LockDuration
//
// After every operation StartOffset moves over the leading terminal offsets,
// which are then forgotten. AdvanceStart forgets everything below an offset
// (retention moved the log start); Reset forgets everything (alter offsets).
// Acquisition takes no new offset at or past StartOffset+MaxInFlight, so at
// most MaxInFlight offsets are ever tracked.
//
// In-flight state is kept as runs of offsets that share every field (state,
// count, holder, deadline): a 500-record batch acquired and accepted whole is
// one run, and 2000 offsets in flight cost at most 2000 small structs, when
// every offset differs from its neighbours.
//
// # __share_group_state
//
// records.go encodes and decodes the share coordinator's records in Kafka
// 4.2's bytes: ShareSnapshotKey/ShareSnapshotValue (the whole state) and
// ShareUpdateKey/ShareUpdateValue (changed batches), with KIP-1226's
// DeliveryCompleteCount tag; and the coordinator key and partition as
// Kafka's ShareCoordinatorService computes them.
//
// # What Kafka does that this package does not
//
//   - Kafka acquires whole log batches and may exceed maxFetchRecords (and
//     the in-flight limit) to finish the last batch it started; Acquire stops
//     exactly at both bounds, splitting a batch (as Kafka's strict
//     record_limit acquire mode does for maxRecords).
//   - Kafka includes the offsets between fetched batches (compacted away) in
//     the acquired range and the client acknowledges them as GAP; Acquire
//     archives offsets past EndOffset that no batch covers without
//     delivering them. Gap acknowledgements are still accepted for acquired
//     offsets.
//   - Kafka's in-flight cache keeps per-offset state only once a batch's
//     offsets diverge, and writes updates (ShareUpdateValue) of the changed
//     batches; Partition's Snapshot is always the whole state.
//   - Fencing by state and leader epochs, the persister round trips, and the
//     share coordinator's snapshot/update merging belong to the broker; this
//     package carries the epochs through and encodes the records.
//   - Acknowledge reports a per-range error; Kafka's per-partition error
//     code for ShareAcknowledge is the broker's to derive.
package share
