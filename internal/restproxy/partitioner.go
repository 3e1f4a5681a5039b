package restproxy

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// manualPartition marks, in a record's Context, a record whose partition
// the request named (the ProduceRequest's partition_id).
type manualPartition struct{}

func withManualPartition(ctx context.Context) context.Context {
	return context.WithValue(ctx, manualPartition{}, true)
}

// partitioner sends a record to the partition its request named, and the
// others as Kafka's Java producer does (franz-go's sticky key
// partitioner: murmur2 of the key, sticky batches for null keys), so a
// keyed record lands where a Java client would put it.
type partitioner struct{}

func (partitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &topicPartitioner{byKey: kgo.StickyKeyPartitioner(nil).ForTopic(topic)}
}

type topicPartitioner struct {
	byKey kgo.TopicPartitioner
}

func manual(r *kgo.Record) bool {
	return r.Context != nil && r.Context.Value(manualPartition{}) != nil
}

func (t *topicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return manual(r) || t.byKey.RequiresConsistency(r)
}

func (t *topicPartitioner) Partition(r *kgo.Record, n int) int {
	if manual(r) {
		return int(r.Partition)
	}
	return t.byKey.Partition(r, n)
}

// OnNewBatch passes on the sticky partitioner's cue to move null-keyed
// records to another partition.
func (t *topicPartitioner) OnNewBatch() {
	if nb, ok := t.byKey.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}
