package connect

// SourcePartitionOffset is one entry of an offsets alter or reset request
// for a source connector (KIP-875): a source partition and the offset to
// store for it, nil to remove it (a tombstone, as a reset writes).
//
// Values are as the runtime reads them from the offsets topic: JSON
// integers are int64 (Kafka's Long after the worker normalizes them), other
// numbers float64, objects map[string]any, arrays []any.
type SourcePartitionOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// SourceOffsetAlterer is implemented by source connectors that check an
// offsets alter or reset before the runtime writes it (Kafka's
// SourceConnector.alterOffsets). An error refuses the request with its
// message. true says the connector has dealt with the change (Kafka's
// "altered successfully"); false, as for connectors that do not implement
// it, makes the runtime add that offsets the connector keeps elsewhere must
// be changed by hand.
type SourceOffsetAlterer interface {
	AlterOffsets(props map[string]string, offsets []SourcePartitionOffset) (bool, error)
}

// SinkOffsetAlterer is the sink side (Kafka's SinkConnector.alterOffsets):
// each partition's new consumer offset, nil to reset it.
type SinkOffsetAlterer interface {
	AlterOffsets(props map[string]string, offsets map[TopicPartition]*int64) (bool, error)
}
