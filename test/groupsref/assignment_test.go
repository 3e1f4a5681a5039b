package groupsref

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAssignmentProblems: the StreamsGroupDescribe check finds each way
// an assignment can be wrong (it passes on Kafka's, so it is checked here
// against broken ones).
func TestAssignmentProblems(t *testing.T) {
	member := func(id, process string, tasks map[string][]int32) kmsg.StreamsGroupDescribeResponseGroupMember {
		m := kmsg.NewStreamsGroupDescribeResponseGroupMember()
		m.MemberID, m.ClientID, m.ProcessID = id, id, process
		for sub, ps := range tasks {
			m.Assignment.ActiveTasks = append(m.Assignment.ActiveTasks, kmsg.TaskIDs{SubtopologyID: sub, Partitions: ps})
		}
		return m
	}
	want := map[string]int32{"0": 2, "1": 2}
	for _, tc := range []struct {
		name    string
		members []kmsg.StreamsGroupDescribeResponseGroupMember
		problem string // a part of the problem; "" for none
	}{
		{"covered once", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0}, "1": {1}}),
			member("b", "p2", map[string][]int32{"0": {1}, "1": {0}}),
		}, ""},
		{"a task twice", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0, 1}, "1": {1}}),
			member("b", "p2", map[string][]int32{"0": {1}, "1": {0}}),
		}, "task 0_1 is active on a and b"},
		{"a task on no member", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0}, "1": {1}}),
			member("b", "p2", map[string][]int32{"0": {1}}),
		}, "task 1_0 is on no member"},
		{"an idle member", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0, 1}, "1": {0, 1}}),
			member("b", "p2", nil),
		}, "member b has no active task"},
		{"one process twice", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0}, "1": {1}}),
			member("b", "p1", map[string][]int32{"0": {1}, "1": {0}}),
		}, "1 processes among 2 members"},
		{"an unknown subtopology", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0}, "1": {1}, "7": {0}}),
			member("b", "p2", map[string][]int32{"0": {1}, "1": {0}}),
		}, "unknown subtopology 7"},
		{"a partition past the topic's", []kmsg.StreamsGroupDescribeResponseGroupMember{
			member("a", "p1", map[string][]int32{"0": {0, 2}, "1": {1}}),
			member("b", "p2", map[string][]int32{"0": {1}, "1": {0}}),
		}, "5 tasks assigned, the topology has 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary, problem := assignmentProblems(tc.members, want)
			if tc.problem == "" && problem != "" || !strings.Contains(problem, tc.problem) {
				t.Fatalf("problem %q, want one naming %q (assignment %s)", problem, tc.problem, summary)
			}
		})
	}
}
