package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// httpRE finds the broker's HTTP listener in its "samsa serving" line.
var httpRE = regexp.MustCompile(`msg="samsa serving".* http=([0-9.]+:[0-9]+)`)

// newShareBroker starts a Samsa broker with its HTTP listener on a free
// port, topic "s" (one partition) holding five records in one batch, and
// share group "sg" reading from the earliest offset. It answers the
// broker and its HTTP address.
func newShareBroker(t *testing.T) (*samsaBroker, string) {
	t.Helper()
	b, found := serveSamsa(t, []*regexp.Regexp{httpRE}, samsaArgs(t, "--override", "samsa.http.listener=127.0.0.1:0"))
	ctx := t.Context()
	cl := b.client(kgo.DefaultProduceTopic("s"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "s"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{Value: []byte{'a' + byte(i)}})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "sg"
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Resources[0].ErrorCode); err != nil {
		t.Fatalf("set share.auto.offset.reset: %v", err)
	}
	return b, found[0][1]
}

// shareDescribe runs group describe sg --json (with --http addr unless
// addr is "") and returns the group.
func shareDescribe(t *testing.T, c *testCluster, addr string) groupDescription {
	t.Helper()
	args := []string{"group", "describe", "sg", "--json"}
	if addr != "" {
		args = append(args, "--http", addr)
	}
	var ds []groupDescription
	out := c.ok("", args...)
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 1 {
		t.Fatalf("describe --json: %v\n%s", err, out)
	}
	return ds[0]
}

// waitShare describes sg until ok accepts it: acknowledgements and a
// member leaving reach the broker after the client returns.
func waitShare(t *testing.T, c *testCluster, addr, what string, ok func(groupDescription) bool) groupDescription {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := shareDescribe(t, c, addr)
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: last described %+v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sharePartitions are d's share-partitions without the leader epochs, which
// depend on the broker's history.
func sharePartitions(t *testing.T, d groupDescription) []sharePartition {
	t.Helper()
	out := []sharePartition{}
	for _, p := range d.SharePartitions {
		p.LeaderEpoch = 0
		if p.InFlight != nil {
			f := *p.InFlight
			f.LeaderEpoch = 0
			p.InFlight = &f
		}
		out = append(out, p)
	}
	return out
}

func TestGroupShare(t *testing.T) {
	b, httpAddr := newShareBroker(t)
	c := b.testCluster

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addr), kgo.ClientID("sharer"), kgo.ShareGroup("sg"), kgo.ConsumeTopics("s"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) == 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("share consumer read nothing: %v", ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("share fetch %s/%d: %v", topic, p, err) })
		recs = fs.Records()
	}
	if len(recs) != 5 {
		t.Fatalf("the first share fetch acquired %d records, want the whole batch of 5", len(recs))
	}

	// The member holds all five: acquired, none done, so the lag is 5.
	active := []groupSummary{{Group: "sg", State: "Stable", Type: "share", ProtocolType: "share", Members: 1}}
	if diff := cmp.Diff(active, listGroupsJSON(t, c, "--type", "share")); diff != "" {
		t.Fatalf("list --type share (-want +got):\n%s", diff)
	}
	if rows := listGroupsJSON(t, c, "--type", "classic,consumer"); len(rows) != 0 {
		t.Fatalf("list --type classic,consumer = %+v, want none", rows)
	}
	d := shareDescribe(t, c, httpAddr)
	if len(d.Members) != 1 || d.Members[0].MemberID == "" {
		t.Fatalf("members = %+v, want one", d.Members)
	}
	member := d.Members[0].MemberID
	checkDescription(t, groupDescription{Group: d.Group, Type: d.Type, State: d.State, ProtocolType: d.ProtocolType,
		Protocol: d.Protocol, Members: d.Members, TotalLag: d.TotalLag}, groupDescription{
		Group: "sg", Type: "share", State: "Stable", ProtocolType: "share", Protocol: "simple",
		Members: []groupMember{{MemberID: member, ClientID: "sharer", Host: "host",
			Assignment: []topicPartitions{{Topic: "s", Partitions: []int32{0}}}}},
		TotalLag: 5,
	})
	want := []sharePartition{{Topic: "s", Partition: 0, StartOffset: ptr(0), Lag: ptr(5),
		InFlight: &shareInFlight{StartOffset: 0, EndOffset: 5, Acquired: 5}}}
	if diff := cmp.Diff(want, sharePartitions(t, d)); diff != "" {
		t.Fatalf("share-partitions with --http (-want +got):\n%s", diff)
	}
	text := c.ok("", "group", "describe", "sg", "--http", httpAddr)
	for _, line := range []string{
		"Group: sg\tType: share\tState: Stable\tAssignor: simple\tMembers: 1\tLag: 5\n",
		"MEMBER-ID", "  sharer  ", "  s:0\n",
		"TOPIC  PARTITION  START-OFFSET  LAG  IN-FLIGHT-END  ACQUIRED  AVAILABLE  ACKNOWLEDGED  ARCHIVED  ERROR\n" +
			"s      0          0             5    5              5         0          0             0         -\n",
	} {
		if !strings.Contains(text, line) {
			t.Fatalf("describe --http lacks %q:\n%s", line, text)
		}
	}
	if text := c.ok("", "group", "describe", "sg"); !strings.Contains(text,
		"TOPIC  PARTITION  START-OFFSET  LAG  ERROR\ns      0          0             5    -\n") {
		t.Fatalf("describe without --http:\n%s", text)
	}

	// An active share group keeps its start offsets and is not deleted.
	c.fails(`group "sg" has active members (state Stable, members: 1)`,
		"group", "reset-offsets", "sg", "--topic", "s", "--to-latest", "--execute")
	c.fails(`share group "sg" has active members`, "group", "delete-offsets", "sg", "--topic", "s")
	c.fails(`group "sg" has active members`, "group", "delete", "sg")

	// 0 and 1 accepted, 2 released, 3 and 4 rejected: the start offset
	// moves past 0 and 1, and only 2 is left to deliver.
	recs[0].Ack(kgo.AckAccept)
	recs[1].Ack(kgo.AckAccept)
	recs[2].Ack(kgo.AckRelease)
	recs[3].Ack(kgo.AckReject)
	recs[4].Ack(kgo.AckReject)
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	d = waitShare(t, c, "", "the start offset to move", func(d groupDescription) bool {
		return len(d.SharePartitions) == 1 && d.SharePartitions[0].StartOffset != nil && *d.SharePartitions[0].StartOffset == 2
	})
	if diff := cmp.Diff([]sharePartition{{Topic: "s", Partition: 0, StartOffset: ptr(2), Lag: ptr(1)}}, sharePartitions(t, d)); diff != "" {
		t.Fatalf("share-partitions after the acks (-want +got):\n%s", diff)
	}
	// In flight past the start: 3 and 4 archived, 2 available or, if
	// the consumer fetched it again already, acquired.
	f := shareDescribe(t, c, httpAddr).SharePartitions[0].InFlight
	if f == nil || f.StartOffset != 2 || f.EndOffset != 5 || f.Archived != 2 || f.Acknowledged != 0 || f.Available+f.Acquired != 1 {
		t.Fatalf("in flight after the acks: %+v", f)
	}

	// Closing the consumer leaves the group; its share-partition is no
	// longer loaded on the leader, so nothing is in flight there, and an
	// --http address that does not answer is named.
	cl.Close()
	d = waitShare(t, c, httpAddr+",127.0.0.1:1", "the member to leave", func(d groupDescription) bool { return d.State == "Empty" })
	if diff := cmp.Diff([]sharePartition{{Topic: "s", Partition: 0, StartOffset: ptr(2), Lag: ptr(1)}}, sharePartitions(t, d)); diff != "" {
		t.Fatalf("share-partitions of the empty group (-want +got):\n%s", diff)
	}
	if !strings.Contains(d.InFlightError, "127.0.0.1:1: ") {
		t.Fatalf("in_flight_error = %q, want the unreachable address named", d.InFlightError)
	}
	if diff := cmp.Diff([]groupSummary{{Group: "sg", State: "Empty", Type: "share", ProtocolType: "share"}},
		listGroupsJSON(t, c, "--state", "Empty")); diff != "" {
		t.Fatalf("list --state Empty (-want +got):\n%s", diff)
	}

	// Resetting an empty share group: a dry run, then each mode executed.
	r := c.run("", "group", "reset-offsets", "sg", "--topic", "s", "--to-earliest")
	if r.err != nil || r.stdout != "TOPIC  PARTITION  CURRENT-OFFSET  NEW-OFFSET\ns      0          2               0\n" {
		t.Fatalf("dry run: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	if d := shareDescribe(t, c, ""); *d.SharePartitions[0].StartOffset != 2 {
		t.Fatalf("a dry run moved the start offset: %+v", d.SharePartitions)
	}
	for _, tc := range []struct {
		args       []string
		start, lag int64
	}{
		{[]string{"--topic", "s", "--to-earliest"}, 0, 5},
		{[]string{"--topic", "s:0", "--to-offset", "4"}, 4, 1},
		{[]string{"--all-topics", "--shift-by", "-1"}, 3, 2},
		{[]string{"--all-topics", "--to-latest"}, 5, 0},
	} {
		r := c.run("", append(append([]string{"group", "reset-offsets", "sg"}, tc.args...), "--execute")...)
		if r.err != nil || !strings.Contains(r.stderr, `set new start offsets for 1 partitions of share group "sg"`) {
			t.Fatalf("%v --execute: %v\n%s", tc.args, r.err, r.stderr)
		}
		d := shareDescribe(t, c, "")
		if diff := cmp.Diff([]sharePartition{{Topic: "s", Partition: 0, StartOffset: ptr(tc.start), Lag: ptr(tc.lag)}},
			sharePartitions(t, d), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%v --execute (-want +got):\n%s", tc.args, diff)
		}
	}

	c.fails(`invalid --topic "s:0": give a whole topic`, "group", "delete-offsets", "sg", "--topic", "s:0")
	c.fails("name the topics whose share state to delete with --topic", "group", "delete-offsets", "sg")
	if out := c.ok("", "group", "delete-offsets", "sg", "--topic", "s"); out != `deleted the share state of topic "s" in group "sg"`+"\n" {
		t.Fatalf("delete-offsets printed %q", out)
	}
	if text := c.ok("", "group", "describe", "sg"); !strings.Contains(text, "Share-partitions: (none)\n") {
		t.Fatalf("describe after delete-offsets:\n%s", text)
	}
	c.fails(`share group "sg" has no start offsets to reset`, "group", "reset-offsets", "sg", "--all-topics", "--to-earliest")

	if out := c.ok("", "group", "delete", "sg"); out != `deleted group "sg"`+"\n" {
		t.Fatalf("delete printed %q", out)
	}
	if rows := listGroupsJSON(t, c); len(rows) != 0 {
		t.Fatalf("list after delete = %+v", rows)
	}
	c.fails(`group "sg" does not exist`, "group", "describe", "sg")
	c.fails(`group "sg" does not exist`, "group", "delete-offsets", "sg", "--topic", "s")

	// delete-offsets handles share groups only; --http is for share groups.
	c.ok("", "group", "reset-offsets", "cg", "--topic", "s", "--to-earliest", "--execute")
	if r := c.run("", "group", "describe", "cg", "--http", httpAddr); r.err != nil ||
		!strings.Contains(r.stderr, `warning: group "cg" is a classic group: --http reads only share groups' in-flight records`) {
		t.Fatalf("describe --http of a classic group: %v, stderr %q", r.err, r.stderr)
	}
	c.fails(`group "cg" is a classic group: delete-offsets handles share groups only`, "group", "delete-offsets", "cg", "--topic", "s")
}
