package txn

import "github.com/samsa-io/samsa/internal/model"

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
	return model.KeyPartition(transactionalID, numPartitions)
}
