package connectrt

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A source record that names its Kafka partition (SourceRecord's
// kafkaPartition) goes to it, as Kafka's WorkerSourceTask hands it to the
// producer; the others are partitioned as the producer otherwise would
// (franz-go's default, murmur2 of the key as Java's). franz-go reads
// Record.Partition only with a manual partitioner, so the choice is made
// per record, marked in its Context.

type explicitPartition struct{}

// withExplicitPartition marks a record's context: use its Partition.
func withExplicitPartition(ctx context.Context) context.Context {
	return context.WithValue(ctx, explicitPartition{}, true)
}

func isExplicit(r *kgo.Record) bool {
	return r.Context != nil && r.Context.Value(explicitPartition{}) != nil
}

// sourcePartitioner is the source producers' partitioner.
type sourcePartitioner struct{ fallback kgo.Partitioner }

func newSourcePartitioner() sourcePartitioner {
	return sourcePartitioner{fallback: kgo.UniformBytesPartitioner(64<<10, true, true, nil)}
}

func (p sourcePartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &sourceTopicPartitioner{fallback: p.fallback.ForTopic(topic)}
}

type sourceTopicPartitioner struct{ fallback kgo.TopicPartitioner }

func (t *sourceTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return isExplicit(r) || t.fallback.RequiresConsistency(r)
}

// Partition is for callers that do not know PartitionByBackup (franz-go
// prefers it): the fallback sees every partition empty.
func (t *sourceTopicPartitioner) Partition(r *kgo.Record, n int) int {
	return t.PartitionByBackup(r, n, &emptyBackup{n: n})
}

// emptyBackup is a TopicBackupIter over n partitions with nothing buffered.
type emptyBackup struct{ i, n int }

func (b *emptyBackup) Next() (int, int64) { b.i++; return b.i - 1, 0 }
func (b *emptyBackup) Rem() int           { return b.n - b.i }

// The fallback's batch cues pass through (the uniform partitioner moves
// null-keyed records on by bytes and on new batches).
func (t *sourceTopicPartitioner) OnNewBatch() {
	if nb, ok := t.fallback.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

func (t *sourceTopicPartitioner) PartitionByBackup(r *kgo.Record, n int, backup kgo.TopicBackupIter) int {
	if isExplicit(r) {
		return int(r.Partition)
	}
	if b, ok := t.fallback.(kgo.TopicBackupPartitioner); ok {
		return b.PartitionByBackup(r, n, backup)
	}
	return t.fallback.Partition(r, n)
}
