package group

import "sync/atomic"

// Stats are what the coordinator did since it started, counted as Kafka's
// group coordinator meters count it (group-coordinator-metrics), for the
// broker's metrics. Each counts a change once its records are stored.
type Stats struct {
	// ClassicRebalances counts classic groups' completed rebalances: the
	// leader's assignment stored, the group Stable
	// (group-completed-rebalance-count).
	ClassicRebalances int64
	// ConsumerRebalances counts consumer groups' (KIP-848) group epoch
	// bumps: a member joined, left or changed its subscription
	// (consumer-group-rebalance-count).
	ConsumerRebalances int64
	// OffsetCommits counts the partitions' offsets committed, by
	// OffsetCommit and TxnOffsetCommit (offset-commit-count);
	// OffsetExpirations those deleted when their retention passed
	// (offset-expiration-count), OffsetDeletions those OffsetDelete
	// deleted (offset-deletion-count).
	OffsetCommits, OffsetExpirations, OffsetDeletions int64
}

// stats are Stats as the turns count them.
type stats struct {
	classicRebalances, consumerRebalances             atomic.Int64
	offsetCommits, offsetExpirations, offsetDeletions atomic.Int64
}

// Stats reads the coordinator's counts.
func (c *Coordinator) Stats() Stats {
	return Stats{
		ClassicRebalances:  c.stats.classicRebalances.Load(),
		ConsumerRebalances: c.stats.consumerRebalances.Load(),
		OffsetCommits:      c.stats.offsetCommits.Load(),
		OffsetExpirations:  c.stats.offsetExpirations.Load(),
		OffsetDeletions:    c.stats.offsetDeletions.Load(),
	}
}
