// Package balance is the self-balancing planner (issue 15,
// docs/DESIGN-balance.md): a pure function from the cluster's state (its
// brokers with their racks, liveness and draining flags; its partitions with
// replicas, ISR, min.insync.replicas and size) to a plan of moves that the
// controller carries out as partition reassignments and preferred-leader
// changes.
//
// Plan works in priority order: it moves replicas off brokers being drained
// or down longer than Options.DownTimeout, repairs partitions whose replicas
// break the rack spread, evens replica counts, then bytes, then preferred
// leaders (a reorder of the replica list, no data moves). Every move keeps
// the rack spread (every rack gets a replica before any gets two), never
// takes out an in-sync replica the partition needs for min.insync.replicas,
// and the plan holds at most Options.MaxMoves data moves counting the
// reassignments already in progress. Each move carries a human reason; what
// could not be done is said in the plan's notes.
//
// The package has no clock, no goroutines and no I/O: the time is a field of
// the state, and the same state gives the same plan. Planning again on the
// state the plan leads to proposes fewer moves, and eventually none (the
// property tests show it on random clusters).
package balance
