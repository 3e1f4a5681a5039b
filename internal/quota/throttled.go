package quota

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ThrottledReplicas is what a topic's leader.replication.throttled.replicas
// or follower.replication.throttled.replicas says about one broker: the
// partitions whose replica on that broker the list names, or every
// partition ("*"). The zero value names none. Kafka's TopicConfigHandler
// keeps the same per topic (parseThrottledPartitions).
type ThrottledReplicas struct {
	all        bool
	partitions []int32 // sorted, no duplicates
}

// ParseThrottledReplicas reads a throttled-replica list, as the topic
// config's items ("partition:broker" each, or the one item "*"; none: an
// empty list), for broker.
func ParseThrottledReplicas(items []string, broker int32) (ThrottledReplicas, error) {
	if len(items) == 1 && strings.TrimSpace(items[0]) == "*" {
		return ThrottledReplicas{all: true}, nil
	}
	var t ThrottledReplicas
	for _, it := range items {
		ps, bs, ok := strings.Cut(strings.TrimSpace(it), ":")
		p, perr := strconv.ParseInt(ps, 10, 32)
		b, berr := strconv.ParseInt(bs, 10, 32)
		if !ok || perr != nil || berr != nil || p < 0 || b < 0 {
			return ThrottledReplicas{}, fmt.Errorf("quota: throttled replica %q is not partitionId:brokerId", it)
		}
		if int32(b) == broker {
			t.partitions = append(t.partitions, int32(p))
		}
	}
	slices.Sort(t.partitions)
	t.partitions = slices.Compact(t.partitions)
	return t, nil
}

// AllThrottled is the list "*".
func AllThrottled() ThrottledReplicas { return ThrottledReplicas{all: true} }

// Has reports whether the list names the replica of partition.
func (t ThrottledReplicas) Has(partition int32) bool {
	if t.all {
		return true
	}
	_, found := slices.BinarySearch(t.partitions, partition)
	return found
}

// IsZero reports whether the list names no replica.
func (t ThrottledReplicas) IsZero() bool { return !t.all && len(t.partitions) == 0 }

// String is the list as it applies to its broker: "*", or the partitions.
func (t ThrottledReplicas) String() string {
	if t.all {
		return "*"
	}
	return fmt.Sprint(t.partitions)
}
