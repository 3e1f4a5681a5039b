package balance

import (
	"fmt"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
)

// benchCluster is a cluster of brokers in three racks (or, uneven, all
// in rack b but broker 1, so replica counts cannot be evened), partitions RF 3
// placed round robin over all but the last broker (just added, empty),
// with one broker draining.
func benchCluster(brokers, partitions int, uneven bool) ClusterState {
	st := ClusterState{Now: testNow}
	for i := 1; i <= brokers; i++ {
		rack := string(rune('a' + i%3))
		if uneven {
			rack = map[bool]string{true: "a", false: "b"}[i == 1]
		}
		st.Brokers = append(st.Brokers, Broker{ID: model.NodeID(i), Rack: rack, Alive: true, Draining: i == 2})
	}
	for i := range partitions {
		var reps []model.NodeID
		for j := range 3 {
			reps = append(reps, model.NodeID(1+(i+j)%(brokers-1)))
		}
		st.Partitions = append(st.Partitions, Partition{
			TopicPartition: model.TopicPartition{Topic: fmt.Sprintf("t%d", i%50), Partition: int32(i / 50)},
			Replicas:       reps, ISR: reps, Leader: reps[0], MinISR: 2, Bytes: int64(i%97) << 20})
	}
	return st
}

func BenchmarkPropose(b *testing.B) {
	for _, size := range []struct {
		brokers, partitions int
		uneven              bool
	}{{12, 1000, false}, {48, 20000, false}, {48, 20000, true}} {
		st := benchCluster(size.brokers, size.partitions, size.uneven)
		opts := DefaultOptions()
		opts.MaxMoves = 50
		b.Run(fmt.Sprintf("brokers=%d/partitions=%d/uneven=%t", size.brokers, size.partitions, size.uneven), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Propose(st, opts)
			}
		})
	}
}
