package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/internal/model"
)

// TestReassignmentJSONIsKafkas: the plan is written byte for byte as
// kafka-reassign-partitions.sh writes it (formatAsReassignmentJson: Jackson,
// compact, version then partitions sorted by topic and partition, every
// replica's log dir "any"), and reads back.
func TestReassignmentJSONIsKafkas(t *testing.T) {
	a := assignment{
		{Topic: "b", Partition: 10}: {3, 1},
		{Topic: "b", Partition: 2}:  {1, 2},
		{Topic: "a", Partition: 0}:  {2},
	}
	want := `{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[2],"log_dirs":["any"]},` +
		`{"topic":"b","partition":2,"replicas":[1,2],"log_dirs":["any","any"]},` +
		`{"topic":"b","partition":10,"replicas":[3,1],"log_dirs":["any","any"]}]}`
	if got := formatReassignmentJSON(a); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := formatReassignmentJSON(assignment{}); got != `{"version":1,"partitions":[]}` {
		t.Errorf("empty: %s", got)
	}
	back, order, err := parseReassignmentJSON([]byte(want), &bytes.Buffer{}, "plan")
	if err != nil || len(back) != 3 || idList(back[model.TopicPartition{Topic: "b", Partition: 10}]) != "3,1" || order[0].Topic != "a" {
		t.Errorf("read back: %v %v %v", back, order, err)
	}
}

// TestParseReassignmentJSON: what Kafka's tool accepts (no version, no
// log_dirs, fields it does not know, with a warning here) and refuses
// (Kafka's checks), and what Samsa refuses besides: log directories.
func TestParseReassignmentJSON(t *testing.T) {
	var warn bytes.Buffer
	a, _, err := parseReassignmentJSON([]byte(`{"partitions":[{"topic":"t","partition":1,"replicas":[1,2],"extra":true}]}`), &warn, "plan")
	if err != nil || idList(a[model.TopicPartition{Topic: "t", Partition: 1}]) != "1,2" {
		t.Fatalf("%v %v", a, err)
	}
	if !strings.Contains(warn.String(), `unknown field "extra"`) {
		t.Errorf("no warning of the unknown field: %q", warn.String())
	}
	for _, c := range []struct{ in, want string }{
		{`{"version":2,"partitions":[]}`, "not supported version field value 2"},
		{`{"version":1,"partitions":[]}`, "partition reassignment list cannot be empty"},
		{`{"version":1}`, "partition reassignment list cannot be empty"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}`, "partition replica list cannot be empty"},
		{`{"partitions":[{"topic":"t","partition":0}]}`, "t-0 has no replicas field"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}`, "t-0 contains multiple entries for 1"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`, "duplicate topic partitions: t-0"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}`, "different from size of log dirs list"},
		{`{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data/1"]}]}`, "moving replicas between log directories is not supported"},
		{`{"partitions":[{"partition":0,"replicas":[1]}]}`, "a partition without a topic"},
		{`[1,2]`, "plan: json: cannot unmarshal"},
	} {
		_, _, err := parseReassignmentJSON([]byte(c.in), &bytes.Buffer{}, "plan")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	topics, err := parseTopicsToMove([]byte(`{"version":1,"topics":[{"topic":"a"},{"topic":"b"}]}`), &bytes.Buffer{}, "topics")
	if err != nil || strings.Join(topics, ",") != "a,b" {
		t.Errorf("topics: %v %v", topics, err)
	}
	if _, err := parseTopicsToMove([]byte(`{"topics":[{"topic":"a"},{"topic":"a"}]}`), &bytes.Buffer{}, "topics"); err == nil ||
		!strings.Contains(err.Error(), "duplicate entries: a") {
		t.Errorf("duplicate topic: %v", err)
	}
	if _, err := parseBrokerList("1,2,1"); err == nil || !strings.Contains(err.Error(), "duplicate entries: 1") {
		t.Errorf("duplicate broker: %v", err)
	}
	if _, err := parseBrokerList("1,x"); err == nil || !strings.Contains(err.Error(), `"x" is not a broker ID`) {
		t.Errorf("bad broker: %v", err)
	}
}

// TestThrottleValues: the throttled replicas are Kafka's: the leader
// side lists each moving partition's sources, the follower side its new
// replicas, "partition:broker" sorted as strings (10 before 2), and a
// move in progress keeps its sources; the rates go on every broker of a
// move.
func TestThrottleValues(t *testing.T) {
	current := assignment{{Topic: "t", Partition: 2}: {1, 2}, {Topic: "t", Partition: 10}: {2, 3}, {Topic: "u", Partition: 0}: {4, 1}}
	proposed := assignment{{Topic: "t", Partition: 2}: {3, 2}, {Topic: "t", Partition: 10}: {2, 4}, {Topic: "u", Partition: 0}: {4, 1, 5}}
	// u-0 is moving already, from [4] to [4 1]: its source is 4 alone.
	inProgress := []kadm.ListPartitionReassignmentsResponse{{Topic: "u", Partition: 0, Replicas: []int32{4, 1}, AddingReplicas: []int32{1}}}
	mm := proposedMoves(inProgress, proposed, current)
	for _, c := range []struct {
		topic  string
		leader bool
		want   string
	}{
		{"t", true, "10:2,10:3,2:1,2:2"},
		{"t", false, "10:4,2:3"},
		{"u", true, "0:4"},
		{"u", false, "0:1,0:5"},
	} {
		if got := throttledReplicas(mm[c.topic], c.leader); got != c.want {
			t.Errorf("%s leader=%v: %q, want %q", c.topic, c.leader, got, c.want)
		}
	}
	if got := idList(mm.reassigningBrokers()); got != "1,2,3,4,5" {
		t.Errorf("brokers %s", got)
	}
}

func TestPrintKafkaReassignments(t *testing.T) {
	var buf bytes.Buffer
	printKafkaReassignments(&buf, []kadm.ListPartitionReassignmentsResponse{
		{Topic: "t", Partition: 0, Replicas: []int32{3, 2, 1}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
		{Topic: "t", Partition: 1, Replicas: []int32{3, 2}, AddingReplicas: []int32{3}},
	})
	want := "Current partition reassignments:\nt-0: replicas: 3,2,1. adding: 3. removing: 1.\nt-1: replicas: 3,2. adding: 3.\n"
	if buf.String() != want {
		t.Errorf("got %q\nwant %q", buf.String(), want)
	}
	buf.Reset()
	printKafkaReassignments(&buf, nil)
	if buf.String() != "No partition reassignments found.\n" {
		t.Errorf("none: %q", buf.String())
	}
}

// TestProgressBar: on a terminal the moves show as a bar of the bytes
// copied, not as lines; elsewhere, a line per check with the bytes left.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := &progressPrinter{out: &buf, total: 4, bar: newMoveBar(&buf)}
	st := moveStatus{left: []kadm.ListPartitionReassignmentsResponse{{Topic: "t", Partition: 0, AddingReplicas: []int32{4}}}, bytesLeft: 3 << 20}
	p.show(st)
	st.bytesLeft = 1 << 20
	p.show(st)
	p.finish()
	if out := buf.String(); !strings.Contains(out, "1 of 4 partition(s) moving") || strings.Contains(out, "still moving") {
		t.Errorf("bar output: %q", out)
	}
	buf.Reset()
	p = newProgressPrinter(&buf, 4)
	p.show(st)
	if want := "1 of 4 still moving, 1.0 MiB left to copy: t:0 (adding 4)\n"; buf.String() != want {
		t.Errorf("line: %q, want %q", buf.String(), want)
	}
}

func TestClusterReassignFlags(t *testing.T) {
	c := newTestCluster(t)
	c.fails("give exactly one of --generate, --execute, --verify, --cancel and --list", "cluster", "reassign")
	c.fails("give exactly one of", "cluster", "reassign", "--list", "--verify")
	c.fails("--generate needs --topics-to-move-json-file and --broker-list", "cluster", "reassign", "--generate")
	c.fails("--execute needs --reassignment-json-file", "cluster", "reassign", "--execute")
	c.fails("--throttle cannot be used with --verify", "cluster", "reassign", "--verify", "--reassignment-json-file", "x", "--throttle", "10")
	c.fails("--broker-list cannot be used with --list", "cluster", "reassign", "--list", "--broker-list", "1")
}
