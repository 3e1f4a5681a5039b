package cli

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
)

// kfake takes a move at once and never has one in progress: start and
// --wait finish, list finds none, cancel is NO_REASSIGNMENT_IN_PROGRESS.
// The moves themselves are tested against Samsa's brokers
// (internal/broker/e2e_reassign_test.go).
func TestReassignOnKfake(t *testing.T) {
	c := newTestCluster(t, kfake.NumBrokers(3), kfake.SeedTopics(2, "moving"))
	if out := c.ok("", "reassign", "start", "moving:0=1,2", "moving:1=2"); out != "started moving 2 partition(s)\n" {
		t.Errorf("start: %q", out)
	}
	if out := c.ok("", "reassign", "start", "--wait", "--interval", "10ms", "moving:0=2,1"); out != "started moving 1 partition(s)\ndone: 1 partition(s) moved\n" {
		t.Errorf("start --wait: %q", out)
	}
	if out := c.ok("", "reassign", "list"); out != "no reassignment in progress\n" {
		t.Errorf("list: %q", out)
	}
	if out := c.ok("", "reassign", "list", "moving"); out != "no reassignment in progress\n" {
		t.Errorf("list moving: %q", out)
	}
	c.fails("moving:0: NO_REASSIGNMENT_IN_PROGRESS", "reassign", "cancel", "moving:0")
	c.fails("moving:5: UNKNOWN_TOPIC_OR_PARTITION", "reassign", "start", "moving:5=1")
}

func TestReassignArguments(t *testing.T) {
	c := newTestCluster(t)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"want TOPIC:PARTITION=ID,ID...", []string{"start", "moving:0"}},
		{"want TOPIC:PARTITION", []string{"cancel", "moving:0=1"}},
		{"want TOPIC:PARTITION", []string{"cancel", "moving"}},
		{`partition "x" is not a partition number`, []string{"cancel", "moving:x"}},
		{`partition "-1" is not a partition number`, []string{"cancel", "moving:-1"}},
		{`"a" is not a broker ID`, []string{"start", "moving:0=1,a"}},
		{"requires at least 1 arg", []string{"start"}},
	} {
		c.fails(tc.want, append([]string{"reassign"}, tc.args...)...)
	}
	// A topic name may hold a colon's neighbours: the last one splits.
	got, err := parseReassignTarget("a.b-c:7=3,1", true)
	if err != nil || got.topic != "a.b-c" || got.partition != 7 || idList(got.replicas) != "3,1" {
		t.Errorf("parse: %+v %v", got, err)
	}
}

func TestPrintReassignments(t *testing.T) {
	var buf bytes.Buffer
	printReassignments(&buf, []kadm.ListPartitionReassignmentsResponse{
		{Topic: "moving", Partition: 0, Replicas: []int32{3, 2, 1}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
		{Topic: "moving", Partition: 1, Replicas: []int32{3, 2}, AddingReplicas: []int32{3}},
	})
	want := "TOPIC   PARTITION  REPLICAS  ADDING  REMOVING\n" +
		"moving  0          3,2,1     3       1\n" +
		"moving  1          3,2       3       \n"
	if buf.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", buf.String(), want)
	}
}

// Against one Samsa node the errors are the controller's, as Kafka's: a
// broker that is not registered or given twice, a cancel with nothing in
// progress. (--forbid-rf-change's refusal needs two brokers: the
// controller's TestReassignmentErrors.)
func TestReassignOnSamsa(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "moving", "--partitions", "1")
	if out := b.ok("", "reassign", "start", "--wait", "--interval", "10ms", "moving:0=1"); out != "started moving 1 partition(s)\ndone: 1 partition(s) moved\n" {
		t.Errorf("start: %q", out)
	}
	b.fails("moving:0: INVALID_REPLICA_ASSIGNMENT: Replica assignment is invalid.: The manual partition assignment includes broker 2, but no such broker is registered.",
		"reassign", "start", "moving:0=2")
	b.fails("includes the broker 1 more than once", "reassign", "start", "--forbid-rf-change", "moving:0=1,1")
	b.fails("moving:0: NO_REASSIGNMENT_IN_PROGRESS", "reassign", "cancel", "moving:0")
	if out := b.ok("", "reassign", "list"); out != "no reassignment in progress\n" {
		t.Errorf("list: %q", out)
	}
}
