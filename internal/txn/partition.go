package txn

import (
	"math"
	"unicode/utf16"
)

// StateTopic is the internal topic holding transaction metadata.
const StateTopic = "__transaction_state"

// OffsetsTopic is the group coordinator's topic, which AddOffsetsToTxn adds
// to a transaction.
const OffsetsTopic = "__consumer_offsets"

// PartitionFor returns the __transaction_state partition that holds
// transactionalID: abs(transactionalID.hashCode()) % numPartitions with
// Java's String.hashCode, as Kafka computes it, so an ID lives where it
// would on an Apache Kafka cluster with the same
// transaction.state.log.num.partitions.
func PartitionFor(transactionalID string, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return 0
	}
	var h int32
	for _, r := range transactionalID {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	// Kafka's Utils.abs maps MinInt32 to 0 rather than overflowing.
	if h == math.MinInt32 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % numPartitions
}
