package model

import (
	"fmt"
	"strconv"
	"strings"
)

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// ParseTopicPartition parses "topic-N", the form Kafka uses for a
// partition's directory name. Topic names may contain '-', so the split is at
// the last one. N is written as String writes it (no sign, no leading
// zero): "t-05" is not t-5's directory, and taking it for t-5 would make a
// stray directory stand for a partition the broker does have.
func ParseTopicPartition(s string) (TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return TopicPartition{}, fmt.Errorf("model: %q is not topic-partition", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 || strconv.FormatInt(p, 10) != s[i+1:] {
		return TopicPartition{}, fmt.Errorf("model: %q is not topic-partition", s)
	}
	return TopicPartition{Topic: s[:i], Partition: int32(p)}, nil
}

// TopicID is a topic's 16-byte UUID (KIP-516).
type TopicID [16]byte

// NodeID identifies a broker or controller.
type NodeID int32

// LeaderEpoch counts leader changes of a partition; -1 means unknown.
type LeaderEpoch = int32

// ProducerID identifies an idempotent or transactional producer; -1 means none.
type ProducerID = int64

// MirrorAppendTag is the number of Samsa's private top-level tagged field
// of a Produce request (v9+, flexible) that asks for a mirror append: the
// batches go to a mirror topic (topic config samsa.mirror.source) at the
// offsets they carry, as the source cluster assigned them
// (docs/DESIGN-mirror-topics.md). Its value is the single byte
// MirrorAppendValue. Kafka reserves no tag numbers for private use; 0x5341
// ("SA") is far above any tag Kafka's Produce schema uses, and a broker that
// does not know it skips it, as the protocol says to do with unknown tags.
const MirrorAppendTag = 0x5341

// MirrorAppendValue is the value of the MirrorAppendTag field.
const MirrorAppendValue byte = 1
