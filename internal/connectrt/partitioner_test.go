package connectrt

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSourcePartitioner: a record that names its partition goes there;
// one that does not is partitioned as franz-go's default would (murmur2
// of the key, as Java's producer).
func TestSourcePartitioner(t *testing.T) {
	// franz-go partitions through PartitionByBackup when a partitioner has it
	// (the uniform one's Partition is unreachable).
	p := newSourcePartitioner().ForTopic("t").(kgo.TopicBackupPartitioner)
	def := kgo.UniformBytesPartitioner(64<<10, true, true, nil).ForTopic("t").(kgo.TopicBackupPartitioner)
	explicit := &kgo.Record{Topic: "t", Key: []byte("k"), Partition: 5, Context: withExplicitPartition(context.Background())}
	if got := p.PartitionByBackup(explicit, 8, &emptyBackup{n: 8}); got != 5 {
		t.Errorf("explicit partition 5 went to %d", got)
	}
	if got := p.Partition(explicit, 8); got != 5 {
		t.Errorf("explicit partition 5 went to %d through Partition", got)
	}
	if !p.RequiresConsistency(explicit) {
		t.Error("an explicit partition must not move")
	}
	for _, key := range []string{"a", "b", "orders-17", "zz"} {
		r := &kgo.Record{Topic: "t", Key: []byte(key), Partition: 5}
		if got, want := p.PartitionByBackup(r, 8, &emptyBackup{n: 8}), def.PartitionByBackup(r, 8, &emptyBackup{n: 8}); got != want {
			t.Errorf("key %q: partition %d, the default partitioner's is %d", key, got, want)
		}
	}
}
