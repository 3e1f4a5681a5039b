package metadata

// Kafka's internal topics: created by the broker on first use with their
// own settings (offsets.topic.*, transaction.state.log.*), reported with
// IsInternal, and protected from clients: no client creates, deletes,
// grows, produces to or deletes records of one, and a config change that
// would break it (a delete cleanup policy) is refused. Kafka's own
// metadata log, __cluster_metadata, is not a topic clients may create
// either.
const (
	ConsumerOffsetsTopic  = "__consumer_offsets"
	TransactionStateTopic = "__transaction_state"
	ShareGroupStateTopic  = "__share_group_state"
	ClusterMetadataTopic  = "__cluster_metadata"
)

// IsInternalTopic reports whether name is one of Kafka's internal topics.
func IsInternalTopic(name string) bool {
	switch name {
	case ConsumerOffsetsTopic, TransactionStateTopic, ShareGroupStateTopic:
		return true
	}
	return false
}
