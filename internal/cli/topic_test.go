package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTopicRoundTrip(t *testing.T) {
	c := newTestCluster(t)

	out := c.ok("", "topic", "create", "orders", "--partitions", "3", "--replication-factor", "1",
		"--config", "retention.ms=60000", "--config", "max.message.bytes=2048")
	if want := `created topic "orders" (partitions 3, replication factor 1)` + "\n"; out != want {
		t.Fatalf("create printed %q, want %q", out, want)
	}
	c.fails(`topic "orders" already exists`, "topic", "create", "orders")
	if out := c.ok("", "topic", "create", "orders", "--if-not-exists"); !strings.Contains(out, "already exists") {
		t.Fatalf("create --if-not-exists printed %q", out)
	}
	c.ok("", "topic", "create", "audit", "-p", "1")

	out = c.ok("", "topic", "list")
	wantList := "NAME    PARTITIONS  REPLICATION-FACTOR  INTERNAL\n" +
		"audit   1           1                   false\n" +
		"orders  3           1                   false\n"
	if out != wantList {
		t.Fatalf("list:\n%s\nwant:\n%s", out, wantList)
	}
	var listed []topicSummary
	if err := json.Unmarshal([]byte(c.ok("", "topic", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	wantListed := []topicSummary{
		{Name: "audit", Partitions: 1, ReplicationFactor: 1},
		{Name: "orders", Partitions: 3, ReplicationFactor: 1},
	}
	if diff := cmp.Diff(wantListed, listed); diff != "" {
		t.Fatalf("list --json (-want +got):\n%s", diff)
	}

	desc := describeJSON(t, c, "orders")
	if len(desc.Partitions) != 3 {
		t.Fatalf("describe: %d partitions, want 3", len(desc.Partitions))
	}
	for i, p := range desc.Partitions {
		if p.Partition != int32(i) || p.Leader < 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Fatalf("describe: partition %d = %+v", i, p)
		}
	}
	if got, want := configMap(desc), map[string]string{
		"max.message.bytes": "2048 DYNAMIC_TOPIC_CONFIG",
		"retention.ms":      "60000 DYNAMIC_TOPIC_CONFIG",
	}; !cmp.Equal(got, want) {
		t.Fatalf("describe configs = %v, want %v", got, want)
	}
	text := c.ok("", "topic", "describe", "orders")
	for _, want := range []string{
		"Topic: orders", "Partitions: 3", "PARTITION  LEADER", "retention.ms       60000  DYNAMIC_TOPIC_CONFIG",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("describe output lacks %q:\n%s", want, text)
		}
	}

	out = c.ok("", "topic", "alter-config", "orders", "--set", "cleanup.policy=compact", "--delete", "retention.ms")
	if want := `altered configs of topic "orders"` + "\n"; out != want {
		t.Fatalf("alter-config printed %q", out)
	}
	if got, want := configMap(describeJSON(t, c, "orders")), map[string]string{
		"cleanup.policy":    "compact DYNAMIC_TOPIC_CONFIG",
		"max.message.bytes": "2048 DYNAMIC_TOPIC_CONFIG",
	}; !cmp.Equal(got, want) {
		t.Fatalf("configs after alter = %v, want %v", got, want)
	}
	if all := describeJSON(t, c, "orders", "--all-configs"); len(all.Configs) <= 2 {
		t.Fatalf("describe --all-configs shows only %d configs", len(all.Configs))
	}

	out = c.ok("", "topic", "delete", "orders", "audit")
	if want := "deleted topic \"orders\"\ndeleted topic \"audit\"\n"; out != want {
		t.Fatalf("delete printed %q", out)
	}
	if out := c.ok("", "topic", "list"); out != "NAME  PARTITIONS  REPLICATION-FACTOR  INTERNAL\n" {
		t.Fatalf("list after delete:\n%s", out)
	}
	c.fails(`topic "orders" does not exist`, "topic", "delete", "orders")
	c.ok("", "topic", "delete", "orders", "--if-exists")
	c.fails(`topic "orders" does not exist`, "topic", "describe", "orders")
	c.fails(`topic "orders" does not exist`, "topic", "alter-config", "orders", "--set", "retention.ms=1")
}

func TestTopicErrors(t *testing.T) {
	c := newTestCluster(t)
	c.ok("", "topic", "create", "t", "-p", "1")
	c.fails(`invalid --config "retention.ms": want key=value`, "topic", "create", "x", "--config", "retention.ms")
	c.fails("invalid --partitions 0", "topic", "create", "x", "--partitions", "0")
	c.fails("nothing to alter", "topic", "alter-config", "t")
	c.fails(`invalid --set "x"`, "topic", "alter-config", "t", "--set", "x")
	c.fails(`topic "x": invalid replication factor: `, "topic", "create", "x", "--replication-factor", "3")
	c.ok("", "topic", "create", "a.b")
	c.fails(`topic "a_b": invalid topic exception: `, "topic", "create", "a_b") // collides with a.b
}

func describeJSON(t *testing.T, c *testCluster, args ...string) topicDescription {
	t.Helper()
	var descs []topicDescription
	out := c.ok("", append([]string{"topic", "describe", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &descs); err != nil {
		t.Fatalf("describe --json: %v\n%s", err, out)
	}
	if len(descs) != 1 {
		t.Fatalf("describe --json returned %d topics", len(descs))
	}
	return descs[0]
}

func configMap(d topicDescription) map[string]string {
	m := map[string]string{}
	for _, c := range d.Configs {
		v := "<nil>"
		if c.Value != nil {
			v = *c.Value
		}
		m[c.Name] = v + " " + c.Source
	}
	return m
}

// TestUnknownSubcommands: every command that groups subcommands refuses a
// name that is none of them, suggesting the nearest, and prints its help
// without arguments.
func TestUnknownSubcommands(t *testing.T) {
	c := &testCluster{t: t, addr: "127.0.0.1:1"}
	parents := 0
	for _, cmd := range Commands() {
		if !cmd.HasSubCommands() {
			continue
		}
		parents++
		r := c.run("", cmd.Name(), "nosuch")
		if want := fmt.Sprintf(`unknown command "nosuch" for "samsa %s" (see samsa %s --help)`, cmd.Name(), cmd.Name()); r.err == nil || r.err.Error() != want {
			t.Errorf("samsa %s nosuch: %v, want %q", cmd.Name(), r.err, want)
		}
		if r := c.run("", cmd.Name()); r.err != nil || !strings.Contains(r.stdout, "Available Commands:") {
			t.Errorf("samsa %s: %v, stdout %q", cmd.Name(), r.err, r.stdout)
		}
	}
	if parents < 3 {
		t.Fatalf("only %d commands with subcommands", parents)
	}
	for _, tc := range [][2]string{{"topic lst", "did you mean list?"}, {"group descibe", "did you mean describe?"},
		{"bench prodce", "did you mean produce?"}, {"topic d", "did you mean describe, delete or delete-records?"}, {"cluster inf", "did you mean info?"}} {
		r := c.run("", strings.Fields(tc[0])...)
		if r.err == nil || !strings.Contains(r.err.Error(), tc[1]) {
			t.Errorf("samsa %s: %v, want %q", tc[0], r.err, tc[1])
		}
	}
}

// TestTopicAlterPartitions grows a topic on a real broker, as
// kafka-topics.sh --alter --partitions does.
func TestTopicAlterPartitions(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "grow", "-p", "2")
	if out := b.ok("", "topic", "alter", "grow", "--partitions", "5"); out != "altered topic \"grow\": 5 partitions (was 2)\n" {
		t.Fatalf("alter printed %q", out)
	}
	desc := describeJSON(t, b.testCluster, "grow")
	if len(desc.Partitions) != 5 {
		t.Fatalf("describe after alter: %d partitions", len(desc.Partitions))
	}
	b.ok("a\nb\nc\n", "produce", "grow", "--partition", "4")
	b.fails(`topic "grow": invalid partitions: `, "topic", "alter", "grow", "--partitions", "3")
	b.fails(`topic "nope" does not exist`, "topic", "alter", "nope", "--partitions", "3")
	b.fails("nothing to alter: give --partitions N", "topic", "alter", "grow")
	b.fails("invalid --partitions 0", "topic", "alter", "grow", "--partitions", "0")
}

// TestTopicDescribeOffsets: describe shows each partition's log start
// offset and high watermark beside its leader, replicas and ISR.
func TestTopicDescribeOffsets(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "off", "-p", "2")
	b.ok("a\nb\nc\n", "produce", "off", "--partition", "1")
	desc := describeJSON(t, b.testCluster, "off")
	type row struct {
		leader      int32
		isr         []int32
		start, high int64
	}
	for i, want := range []row{{1, []int32{1}, 0, 0}, {1, []int32{1}, 0, 3}} {
		p := desc.Partitions[i]
		if p.LogStartOffset == nil || p.HighWatermark == nil || p.Leader != want.leader || !slices.Equal(p.ISR, want.isr) ||
			*p.LogStartOffset != want.start || *p.HighWatermark != want.high || p.Error != "" {
			t.Fatalf("partition %d = %+v, want %+v", i, p, want)
		}
	}
	text := b.ok("", "topic", "describe", "off")
	for _, want := range []string{
		"PARTITION  LEADER  EPOCH  REPLICAS  ISR  OFFLINE  FLAGS  LOG-START-OFFSET  HIGH-WATERMARK  ERROR\n",
		"\n1          1       ",
		"  0                 3               -\n",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("describe lacks %q:\n%s", want, text)
		}
	}
}

// TestTopicDeleteRecords cuts partitions of a real broker's topic, as
// kafka-delete-records.sh does.
func TestTopicDeleteRecords(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "cut", "-p", "2")
	b.ok("a\nb\nc\nd\ne\n", "produce", "cut", "--partition", "0")
	b.ok("x\ny\nz\n", "produce", "cut", "--partition", "1")

	if out := b.ok("", "topic", "delete-records", "cut", "--partition", "0", "--offset", "2"); out != "topic \"cut\" partition 0: log start offset now 2\n" {
		t.Fatalf("delete-records printed %q", out)
	}
	if out := b.ok("", "consume", "cut", "--partition", "0"); out != "c\nd\ne\n" {
		t.Fatalf("partition 0 after delete-records = %q", out)
	}
	if p := describeJSON(t, b.testCluster, "cut").Partitions[0]; *p.LogStartOffset != 2 || *p.HighWatermark != 5 {
		t.Fatalf("partition 0 = %+v", p)
	}
	b.fails(`topic "cut" partition 1: offset out of range: `, "topic", "delete-records", "cut", "--partition", "1", "--offset", "4")

	out := b.ok("", "topic", "delete-records", "cut", "--offset", "-1")
	if want := "topic \"cut\" partition 0: log start offset now 5\ntopic \"cut\" partition 1: log start offset now 3\n"; out != want {
		t.Fatalf("delete-records --offset -1 printed %q", out)
	}
	if out := b.ok("", "consume", "cut"); out != "" {
		t.Fatalf("consume after deleting everything = %q", out)
	}
	b.fails(`topic "nope" does not exist`, "topic", "delete-records", "nope", "--offset", "1")
	b.fails(`topic "cut" has no partition 7 (it has 2)`, "topic", "delete-records", "cut", "--partition", "7", "--offset", "1")
	b.fails("give --offset", "topic", "delete-records", "cut")
	b.fails("invalid --offset -2", "topic", "delete-records", "cut", "--offset", "-2")
}

// TestTopicPartitionFlags: the flags are kafka-topics.sh's, and a report
// lists the partitions that have any flag asked for.
func TestTopicPartitionFlags(t *testing.T) {
	two := "2"
	td := kadm.TopicDetail{Topic: "t", Partitions: kadm.PartitionDetails{
		0: {Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}},
		1: {Partition: 1, Leader: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 1}, OfflineReplicas: []int32{3}},
		2: {Partition: 2, Leader: 3, Replicas: []int32{3, 1, 2}, ISR: []int32{3}},
		3: {Partition: 3, Leader: -1, Replicas: []int32{1, 2, 3}, ISR: []int32{1}},
		4: {Partition: 4, Leader: 4, Replicas: []int32{4, 1, 2}, ISR: []int32{4, 1, 2}},
	}}
	live := map[int32]bool{1: true, 2: true, 3: true}
	configs := []kadm.Config{{Key: "min.insync.replicas", Value: &two, Source: kmsg.ConfigSourceDynamicTopicConfig}}
	d := describeTopic(td, nil, live, configs, false)
	type flags struct{ under, minISR, offline bool }
	want := []flags{{}, {under: true}, {under: true, minISR: true}, {under: true, minISR: true, offline: true}, {offline: true}}
	for i, p := range d.Partitions {
		if got := (flags{p.UnderReplicated, p.UnderMinISR, p.Offline}); got != want[i] {
			t.Errorf("partition %d: %+v, want %+v", i, got, want[i])
		}
		if p.LogStartOffset != nil || p.HighWatermark != nil || p.Error != "" {
			t.Errorf("partition %d of a report has offsets or an error: %+v", i, p)
		}
	}
	if d.Partitions[0].UnderMinISR || !describeTopic(td, nil, live, nil, false).Partitions[3].UnderMinISR {
		t.Errorf("without min.insync.replicas only a leaderless partition is under it")
	}
	var out strings.Builder
	rows := reportPartitions([]topicDescription{d}, partitionReport{underReplicated: true})
	if err := printReport(&out, rows); err != nil {
		t.Fatal(err)
	}
	wantReport := "TOPIC  PARTITION  LEADER  EPOCH  REPLICAS  ISR  OFFLINE  FLAGS                                   ERROR\n" +
		"t      1          2       0      2,3,1     2,1  3        under-replicated                        -\n" +
		"t      2          3       0      3,1,2     3    -        under-replicated,under-min-isr          -\n" +
		"t      3          -1      0      1,2,3     1    -        under-replicated,under-min-isr,offline  -\n"
	if out.String() != wantReport {
		t.Fatalf("report:\n%s\nwant:\n%s", out.String(), wantReport)
	}
	for _, c := range []struct {
		report partitionReport
		want   []int32
	}{
		{partitionReport{unavailable: true}, []int32{3, 4}},
		{partitionReport{underMinISR: true}, []int32{2, 3}},
		{partitionReport{underMinISR: true, unavailable: true}, []int32{2, 3, 4}},
	} {
		var got []int32
		for _, r := range reportPartitions([]topicDescription{d}, c.report) {
			got = append(got, r.Partition)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("report %+v: partitions %v, want %v", c.report, got, c.want)
		}
	}
}

// TestTopicDescribeReports runs the reports on a real single node: a
// topic asking for more in-sync replicas than it has is under its minimum
// ISR but not under-replicated; with no topic named, every topic counts.
func TestTopicDescribeReports(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "strict", "-p", "2", "--config", "min.insync.replicas=2")
	b.ok("", "topic", "create", "relaxed", "-p", "1")
	if out := b.ok("", "topic", "describe", "--under-replicated"); out != "TOPIC  PARTITION  LEADER  EPOCH  REPLICAS  ISR  OFFLINE  FLAGS  ERROR\n" {
		t.Fatalf("under-replicated report:\n%s", out)
	}
	var rows []reportedPartition
	if err := json.Unmarshal([]byte(b.ok("", "topic", "describe", "--under-min-isr", "--unavailable", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Topic != "strict" || rows[1].Partition != 1 || !rows[0].UnderMinISR || rows[0].Offline || rows[0].UnderReplicated {
		t.Fatalf("under-min-isr report: %+v", rows)
	}
	text := b.ok("", "topic", "describe")
	if !strings.Contains(text, "Topic: relaxed") || !strings.Contains(text, "Topic: strict") || !strings.Contains(text, "  under-min-isr  ") {
		t.Fatalf("describe of every topic:\n%s", text)
	}
}
