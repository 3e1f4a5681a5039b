// Package group is the group coordinator: consumer group membership with the
// classic rebalance protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// with KIP-62 rebalance timeouts, KIP-345 static membership, KIP-394
// MEMBER_ID_REQUIRED and KIP-429 cooperative assignors passed through) and
// with KIP-848's consumer protocol (ConsumerGroupHeartbeat and
// ConsumerGroupDescribe: server-side assignors, member epochs, incremental
// reconciliation), KIP-932's share groups (ShareGroupHeartbeat,
// ShareGroupDescribe and the share offsets admin APIs, the share state
// itself being the share coordinator's), KIP-1071's streams groups
// (StreamsGroupHeartbeat and StreamsGroupDescribe: Kafka Streams
// topologies, internal topics, active, standby and warm-up tasks), and
// committed offsets (transactional ones too, KIP-98
// and KIP-447), kept in the compacted __consumer_offsets topic in Apache
// Kafka's own key and value formats so they survive restarts and read the
// same with Kafka's tools.
//
// The broker's handler files stay thin: decode a request, call the method of
// the same name on a Coordinator, encode the kmsg response it returns. The
// coordinator never talks to the network or to storage directly; it writes
// and replays __consumer_offsets through the Log interface, which the
// broker adapts to its partitions, and learns about topics through Deps
// (TopicExists for commits, TopicPartitions and TopicNames for consumer
// group assignment, CreateTopics for streams groups' internal topics). See docs/DESIGN-group.md for the state machines, the
// persistence format and the locking.
//
// # Files
//
//	coordinator.go  Coordinator, Deps, Start/Stop, Load/Unload, the group table and its locking
//	config.go       Config, with Kafka's names and defaults
//	step.go         step: the effects (log writes, replies) of one state-machine turn
//	group.go        group: what every protocol shares (offsets, lock, kind), conversions
//	classic.go      the classic protocol's state and members
//	classic_join.go JoinGroup and the join phase (new, pending, static and known members)
//	classic_sync.go SyncGroup, Heartbeat, LeaveGroup, timeouts
//	api_classic.go  the exported JoinGroup/SyncGroup/Heartbeat/LeaveGroup
//	consumer.go     the consumer protocol's (KIP-848) state, members and indexes
//	consumer_heartbeat.go  join, heartbeat, leave, target assignment, timeouts
//	consumer_reconcile.go  a member's step toward its target (revoke first, then assign)
//	assign.go       the server-side assignors, uniform and range
//	share.go        KIP-932 share groups: state, members, initialized partitions
//	share_heartbeat.go     share join, heartbeat, leave, target assignment, timeouts
//	share_assign.go the share groups' simple assignor
//	api_share.go    the exported ShareGroupHeartbeat/ShareGroupDescribe
//	api_share_offsets.go   Describe/Alter/DeleteShareGroupOffsets, ShareStates
//	records_share.go       the share group records (key types 10-15)
//	share_load.go   replay of the share group records
//	topic_partitions.go    topicPartitions, sets of partitions by topic ID
//	api_consumer.go the exported ConsumerGroupHeartbeat/ConsumerGroupDescribe, WithClient
//	api_offsets.go  OffsetCommit, OffsetFetch, OffsetDelete
//	txn_offsets.go  TxnOffsetCommit and CompleteTransaction: offsets pending in transactions
//	api_admin.go    DescribeGroups, ListGroups, DeleteGroups
//	expire.go       offset retention (KIP-211) and the cleanup of dead groups
//	records.go      __consumer_offsets keys, values and batches
//	records_consumer.go    the consumer group records (key types 3-8)
//	load.go         replay of a __consumer_offsets partition
//	partition.go    PartitionFor, Kafka's group-to-partition hash
//	streams.go      the streams protocol's (KIP-1071) state and members, commit rules
//	streams_topology.go    topologies, and their configuration against the topics (tasks, internal topics)
//	streams_assign.go      the streams task assignor: sticky active tasks, standbys, warm-ups
//	streams_heartbeat.go   streams join, heartbeat, leave, target, timeouts, endpoint information
//	streams_reconcile.go   a streams member's step toward its target
//	streams_tasks.go       task IDs and task sets
//	api_streams.go  the exported StreamsGroupHeartbeat/StreamsGroupDescribe, StreamsConfig, NewTopic
//	records_streams.go     the streams group records (key types 17-23)
//	load_streams.go the replay of streams group records
//	memlog.go       MemLog, an in-memory Log
//	errors.go       Kafka's mapping of append errors to response codes
//	stats.go        Stats: rebalances and offsets counted for the broker's metrics
//
// # Time
//
// The state machine reads no clock: every turn gets its time from the
// Coordinator's clock.Clock, and deadlines (session, rebalance, sync,
// initial-delay and revocation timeouts) are checked by a periodic tick,
// not by timers, so a test moves a clock.Manual and calls tick to make
// time pass.
//
// # Lock order
//
//	group.mu  ->  Coordinator.mu
//
// Coordinator.mu guards only the table of groups and partitions and is never
// held while taking a group's lock or doing I/O. A group's lock is held for
// a whole turn, including the append of the records the turn wrote, so the
// log holds a group's records in the order its state changed.
package group
