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
