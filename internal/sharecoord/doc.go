// Package sharecoord is the share coordinator (KIP-932): it keeps the
// durable state of share-partitions (which offsets of a topic partition a
// share group has acknowledged or archived, and their delivery counts) in
// the compacted internal topic __share_group_state, in Apache Kafka's own
// key and value formats (internal/share's records.go), and serves it to
// the share-partition leaders through Kafka's inter-broker requests
// InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
// DeleteShareGroupState and ReadShareGroupStateSummary.
//
// A share-partition's state lives in one partition of __share_group_state,
// chosen from the key "group:topicId:partition" as Kafka chooses it
// (share.PartitionFor); the broker leading that partition is the key's
// coordinator, found with FindCoordinator key type 2. Like the group and
// transaction coordinators, it follows leadership: the broker loads each
// partition it comes to lead (replaying its records) and unloads those it
// loses, and a key whose partition is not loaded answers NOT_COORDINATOR
// (COORDINATOR_LOAD_IN_PROGRESS while loading).
//
// Each write appends one ShareSnapshot record holding the key's whole
// state after the write, and returns once the record is committed (as an
// acks=all produce), so an acknowledgement the share-partition leader has
// answered is never lost. Kafka also writes ShareUpdate deltas between
// snapshots; both are read on load, and compaction keeps the newest
// snapshot of each key.
//
// Fencing, as Kafka's: a write carrying an older state epoch than the
// stored one is FENCED_STATE_EPOCH (the state was re-initialized, by
// AlterShareGroupOffsets, since the writer read it), and one carrying an
// older leader epoch than a reader's is FENCED_LEADER_EPOCH (a newer leader
// of the topic partition has read the state: the old one must stop).
//
// See docs/DESIGN-share.md.
package sharecoord
