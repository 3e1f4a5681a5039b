package assign

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// TaskID names a task as Kafka Streams does: the subtopology (Kafka's
// "topic group") and the partition of its source topics it processes.
// Its text form, "<subtopology>_<partition>", names the task's state
// directory and appears in logs, so it matches Kafka's TaskId.toString.
type TaskID struct {
	Subtopology int32
	Partition   int32
}

func (t TaskID) String() string {
	return strconv.FormatInt(int64(t.Subtopology), 10) + "_" + strconv.FormatInt(int64(t.Partition), 10)
}

// Compare orders tasks by subtopology, then partition: the order every
// list of tasks this package produces is sorted in.
func (t TaskID) Compare(o TaskID) int {
	if c := cmp.Compare(t.Subtopology, o.Subtopology); c != 0 {
		return c
	}
	return cmp.Compare(t.Partition, o.Partition)
}

// ParseTaskID reads "<subtopology>_<partition>", both non-negative
// decimal int32s, as Kafka's TaskId.parse (without named topologies,
// which Kafka removed).
func ParseTaskID(s string) (TaskID, error) {
	sub, part, ok := strings.Cut(s, "_")
	if !ok {
		return TaskID{}, fmt.Errorf("assign: task id %q: want <subtopology>_<partition>", s)
	}
	st, err := parseNonNegative(sub)
	if err != nil {
		return TaskID{}, fmt.Errorf("assign: task id %q: subtopology: %w", s, err)
	}
	p, err := parseNonNegative(part)
	if err != nil {
		return TaskID{}, fmt.Errorf("assign: task id %q: partition: %w", s, err)
	}
	return TaskID{Subtopology: st, Partition: p}, nil
}

func parseNonNegative(s string) (int32, error) {
	// strconv accepts a leading '+'; a task ID never has one.
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("%q is not a non-negative number", s)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, err
	}
	return int32(n), nil
}

// TopicPartition is one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) compare(o TopicPartition) int {
	if c := cmp.Compare(tp.Topic, o.Topic); c != 0 {
		return c
	}
	return cmp.Compare(tp.Partition, o.Partition)
}
