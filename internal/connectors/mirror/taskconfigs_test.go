package mirror

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTaskConfigs: partitions and groups are dealt round robin to at most
// tasks.max tasks, in Kafka's encodings, with each task's index.
func TestTaskConfigs(t *testing.T) {
	c := &SourceConnector{props: map[string]string{"topics": "x"}, partitions: []topicPartition{{"a-b", 0}, {"a-b", 1}, {"c", 0}}}
	got, err := c.TaskConfigs(2)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"topics": "x", TaskAssignedPartitions: "a-b-0,c-0", TaskIndex: "0"},
		{"topics": "x", TaskAssignedPartitions: "a-b-1", TaskIndex: "1"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("source task configs (-want +got):\n%s", d)
	}
	for _, s := range []string{"a-b-0", "c-0", "a-b-1"} {
		tp, err := parseTopicPartition(s)
		if err != nil || tp.String() != s {
			t.Errorf("%s read back as %v %v", s, tp, err)
		}
	}
	if got, _ := c.TaskConfigs(10); len(got) != 3 {
		t.Errorf("%d tasks for 3 partitions", len(got))
	}
	if got, _ := (&SourceConnector{}).TaskConfigs(4); len(got) != 0 {
		t.Errorf("%d tasks before the first topic sync", len(got))
	}
	cc := &CheckpointConnector{props: map[string]string{}, groups: []string{"g1", "g2", "g3"}}
	groups, _ := cc.TaskConfigs(2)
	if len(groups) != 2 || groups[0][TaskAssignedGroups] != "g1,g3" || groups[1][TaskAssignedGroups] != "g2" {
		t.Errorf("checkpoint task configs %v", groups)
	}
}
