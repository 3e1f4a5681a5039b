package group

import (
	"log/slog"
	"time"
)

// step is one turn of a group's state machine: the time it happens at, the
// settings, and what the turn wants done once it returns. The state machine
// never blocks, never does I/O and never reads a clock. The Coordinator runs
// a step's writes while it still holds the group's lock, so the log holds a
// group's records in the order its state changed, and delivers the replies
// only after every write returned, so a client never hears of a state the
// log may not hold.
type step struct {
	now time.Time
	cfg *Config
	// overrides returns the group's own configs (Deps.GroupConfigs); nil
	// when it has none.
	overrides func() map[string]string
	log       *slog.Logger
	// newMemberID makes a member ID from a client ID or instance ID.
	newMemberID func(prefix string) string
	// topics looks topics up for consumer groups.
	topics topicLookup
	// stats are the coordinator's counts; epochBumps the consumer group
	// epoch bumps of this turn, counted once its records are stored
	// (finishTurn) unless it is undone.
	stats      *stats
	epochBumps int

	writes  []write
	replies []func()
	// undo puts back, in reverse order, what the turn changed in a
	// consumer group, for when its records cannot be stored.
	undo []func()
}

// topicLookup is the part of Deps consumer groups read topics through.
type topicLookup struct {
	partitions func(name string) (id [16]byte, partitions int32, ok bool)
	names      func() []string
	name       func(id [16]byte) (string, bool)
}

// write is a batch of records to append to the group's partition of
// __consumer_offsets.
type write struct {
	records []kv
	// producer, when set, makes the batch transactional: a TxnOffsetCommit's
	// offsets, written with the transaction's producer ID and epoch.
	producer *txnProducer
	// done runs with the append's error, still under the group's lock. It
	// may add writes and replies to the step; nil when nothing depends on
	// the outcome.
	done func(s *step, err error)
}

// kv is one record of __consumer_offsets; a nil value is a tombstone.
type kv struct {
	key, value []byte
}

func (s *step) write(records []kv, done func(s *step, err error)) {
	s.writes = append(s.writes, write{records: records, done: done})
}

// writeTxn is write for the records of a transaction.
func (s *step) writeTxn(records []kv, producer txnProducer, done func(s *step, err error)) {
	s.writes = append(s.writes, write{records: records, producer: &producer, done: done})
}

// reply queues a delivery to a waiting request. Waiter channels have room
// for the one reply each ever gets, so delivering never blocks.
func (s *step) reply(fn func()) { s.replies = append(s.replies, fn) }

func (s *step) replyJoin(ch chan<- joinResult, r joinResult) {
	s.reply(func() { ch <- r })
}

func (s *step) replySync(ch chan<- syncResult, r syncResult) {
	s.reply(func() { ch <- r })
}

// onUndo records how to put back a change of this turn.
func (s *step) onUndo(fn func()) { s.undo = append(s.undo, fn) }

// rollback undoes the turn's changes, newest first.
func (s *step) rollback() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
	s.undo = nil
}

// deliver hands out the queued replies; call it after the writes are done.
func (s *step) deliver() {
	for _, fn := range s.replies {
		fn()
	}
	s.replies = nil
}
