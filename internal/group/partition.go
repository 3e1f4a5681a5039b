package group

import "github.com/samsa-io/samsa/internal/model"

// OffsetsTopic is the internal topic holding committed offsets and group
// metadata.
const OffsetsTopic = "__consumer_offsets"

// PartitionFor returns the __consumer_offsets partition that holds groupID:
// abs(groupID.hashCode()) % numPartitions with Java's String.hashCode, as
// Kafka computes it, so a group lives in the same partition as it would on
// an Apache Kafka cluster with the same offsets.topic.num.partitions (which
// matters to anyone reading the topic with Kafka's tools).
func PartitionFor(groupID string, numPartitions int32) int32 {
	return model.KeyPartition(groupID, numPartitions)
}
