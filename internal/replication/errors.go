package replication

import "errors"

// The errors a Partition answers with, each standing for one Kafka error
// code the broker maps it to (errors.Is). Offsets outside the log are
// storage.ErrOffsetOutOfRange (OFFSET_OUT_OF_RANGE), as the log answers.
var (
	// ErrNotLeader: the operation needs the partition's leader and this
	// replica is not it, or stopped being it meanwhile
	// (NOT_LEADER_OR_FOLLOWER).
	ErrNotLeader = errors.New("replication: not the leader")
	// ErrNotFollower: a follower's operation (an append or truncation for
	// the fetcher) on a replica that leads or has no role yet. The
	// fetcher drops the response; no client sees it.
	ErrNotFollower = errors.New("replication: not a follower")
	// ErrNotReplica: a follower fetch from a broker that holds no replica
	// of the partition (NOT_LEADER_OR_FOLLOWER, as Kafka answers it).
	ErrNotReplica = errors.New("replication: not a replica of the partition")
	// ErrFencedLeaderEpoch: the request's leader epoch is older than this
	// replica's (FENCED_LEADER_EPOCH, KIP-320).
	ErrFencedLeaderEpoch = errors.New("replication: fenced leader epoch")
	// ErrUnknownLeaderEpoch: the request's leader epoch is newer than this
	// replica knows yet (UNKNOWN_LEADER_EPOCH, KIP-320): retry.
	ErrUnknownLeaderEpoch = errors.New("replication: unknown leader epoch")
	// ErrNotEnoughReplicasAfterAppend: an acks=all produce was written,
	// but the committed ISR fell below min.insync.replicas before it was
	// committed (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
	ErrNotEnoughReplicasAfterAppend = errors.New("replication: not enough in-sync replicas after the append")
)
