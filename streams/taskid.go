package streams

import (
	"fmt"
	"strconv"
	"strings"
)

// TaskID names a task as Kafka Streams does: the subtopology and the
// partition of its source topics, printed "0_1".
type TaskID struct {
	Subtopology int32
	Partition   int32
}

func (id TaskID) String() string { return fmt.Sprintf("%d_%d", id.Subtopology, id.Partition) }

// ParseTaskID reads "0_1".
func ParseTaskID(s string) (TaskID, error) {
	a, b, ok := strings.Cut(s, "_")
	if !ok {
		return TaskID{}, fmt.Errorf("streams: task id %q is not <subtopology>_<partition>", s)
	}
	st, err1 := strconv.ParseInt(a, 10, 32)
	p, err2 := strconv.ParseInt(b, 10, 32)
	if err1 != nil || err2 != nil || st < 0 || p < 0 {
		return TaskID{}, fmt.Errorf("streams: task id %q is not <subtopology>_<partition>", s)
	}
	return TaskID{int32(st), int32(p)}, nil
}
