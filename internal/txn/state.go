package txn

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The states of a transaction, Kafka's TransactionState:
//
//	Empty --AddPartitions/AddOffsets--> Ongoing --EndTxn--> PrepareCommit --markers--> CompleteCommit
//	                                           \--EndTxn/timeout/fence--> PrepareAbort --markers--> CompleteAbort
//	CompleteCommit, CompleteAbort --AddPartitions--> Ongoing;  Empty/Complete* --expiry--> Dead (tombstone)
//
// PrepareEpochFence is Kafka's in-memory state of an Ongoing transaction
// being fenced; here the fence is the PrepareAbort record written with the
// bumped epoch, so the state is only ever read back from Kafka's logs.
const (
	stateEmpty             = kmsg.TransactionStateEmpty
	stateOngoing           = kmsg.TransactionStateOngoing
	statePrepareCommit     = kmsg.TransactionStatePrepareCommit
	statePrepareAbort      = kmsg.TransactionStatePrepareAbort
	stateCompleteCommit    = kmsg.TransactionStateCompleteCommit
	stateCompleteAbort     = kmsg.TransactionStateCompleteAbort
	stateDead              = kmsg.TransactionStateDead
	statePrepareEpochFence = kmsg.TransactionStatePrepareEpochFence
)

// Transaction versions, the levels of the transaction.version feature.
// Version 2 is KIP-890 part 2: partitions are added implicitly by the
// partition leaders and every EndTxn bumps the producer epoch.
const (
	// TransactionVersionFeature is the feature name the broker advertises
	// in ApiVersions.
	TransactionVersionFeature = "transaction.version"
	// MaxTransactionVersion is the highest level this coordinator serves.
	MaxTransactionVersion int16 = 2
)

const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
)

// epochExhausted is Kafka's test for a producer epoch that cannot be bumped
// again: the next InitProducerID hands out a new producer ID. One short of
// MaxInt16 so a fence can still bump once.
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// txnState is what a __transaction_state value holds, plus the previous
// epoch kept in memory for retries. A turn copies it, changes the copy,
// writes it, and only then makes it current.
type txnState struct {
	producerID    int64
	producerEpoch int16
	// lastProducerID and lastProducerEpoch are what the producer held
	// before the last bump, so a retried InitProducerID or (version 2)
	// EndTxn is recognized. lastProducerID is persisted (KIP-890's
	// PreviousProducerID); the epoch is not, as in Kafka.
	lastProducerID    int64
	lastProducerEpoch int16
	// nextProducerID is the producer ID a version 2 EndTxn handed out
	// because the epoch was exhausted; the complete record moves to it.
	nextProducerID int64
	timeout        time.Duration
	state          kmsg.TransactionState
	partitions     []model.TopicPartition // sorted, no duplicates
	start          time.Time              // zero when no transaction is running
	lastUpdate     time.Time
	version        int16 // the client's transaction version
}

// txn is one transactional ID.
type txn struct {
	id        string
	partition int32

	mu sync.Mutex
	// The fields below are guarded by mu.
	st txnState
	// completing is set while one goroutine writes the markers of a
	// prepared transaction with mu released; others see the Prepare state
	// and answer CONCURRENT_TRANSACTIONS.
	completing bool
	// removed is set once the txn left the table (expired or unloaded).
	removed bool
}

func (s *txnState) hasPartition(tp model.TopicPartition) bool {
	_, ok := slices.BinarySearchFunc(s.partitions, tp, compareTP)
	return ok
}

// withPartitions returns the set of s's partitions and tps.
func (s *txnState) withPartitions(tps []model.TopicPartition) []model.TopicPartition {
	out := slices.Clone(s.partitions)
	for _, tp := range tps {
		if i, ok := slices.BinarySearchFunc(out, tp, compareTP); !ok {
			out = slices.Insert(out, i, tp)
		}
	}
	return out
}

func compareTP(a, b model.TopicPartition) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// bumped is s with the producer epoch incremented, or a new producer ID at
// epoch 0 (newID) once the epoch is exhausted, remembering the old pair.
func (s txnState) bumped(newID int64) txnState {
	s.lastProducerID, s.lastProducerEpoch = s.producerID, s.producerEpoch
	if epochExhausted(s.producerEpoch) && newID >= 0 {
		s.producerID, s.producerEpoch = newID, 0
	} else {
		s.producerEpoch++
	}
	return s
}

// prepared reports whether s waits for its markers.
func (s *txnState) prepared() bool {
	return s.state == statePrepareCommit || s.state == statePrepareAbort
}

// running reports whether s has a transaction started and not finished.
func (s *txnState) running() bool {
	return s.state == stateOngoing || s.prepared()
}
