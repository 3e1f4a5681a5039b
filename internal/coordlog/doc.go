// Package coordlog holds what the group and transaction coordinators share
// about the internal topic they keep their state in (__consumer_offsets,
// __transaction_state): Partitions, the table of the partitions a
// coordinator serves and how far each is loaded (the broker loads each
// partition as it becomes its leader); and MemLog, the in-memory twin of the broker's
// adapter over those partitions, for tests. Each coordinator declares its
// own Log interface (the errors it maps differ); MemLog satisfies both.
package coordlog
