package cli

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group tests run on topic "t" with two partitions: offsets 0-2 of
// partition 0 have timestamps 1000, 2000 and 3000 ms; offsets 0-1 of
// partition 1 have 1000 and 2000 ms.
func newGroupTestCluster(t *testing.T) *testCluster {
	t.Helper()
	c := newTestCluster(t, kfake.SeedTopics(2, "t"))
	cl := c.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("t"))
	var recs []*kgo.Record
	for p, n := range []int{3, 2} {
		for i := range n {
			recs = append(recs, &kgo.Record{Partition: int32(p), Value: []byte("v"), Timestamp: time.UnixMilli(int64(1000 * (i + 1)))})
		}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return c
}

// joinGroup joins group, reads all five records and commits commits. The
// returned function closes it, leaving the group.
func joinGroup(t *testing.T, c *testCluster, group string, commits map[int32]int64, opts ...kgo.Opt) (*kgo.Client, func()) {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(c.addr),
		kgo.ClientID("reader"),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics("t"),
		kgo.Balancers(kgo.RangeBalancer()),
		kgo.DisableAutoCommit(),
	}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	leave := sync.OnceFunc(cl.Close)
	t.Cleanup(leave)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for read := 0; read < 5; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group member read %d of 5 records: %v", read, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		read += fs.NumRecords()
	}
	offsets := map[int32]kgo.EpochOffset{}
	for p, o := range commits {
		offsets[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var commitErr error
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"t": offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			commitErr = err
			if err == nil {
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if rp.ErrorCode != 0 && commitErr == nil {
							commitErr = kerr.ErrorForCode(rp.ErrorCode)
						}
					}
				}
			}
		})
	if commitErr != nil {
		t.Fatalf("commit: %v", commitErr)
	}
	return cl, leave
}

// committed is the group's committed offsets on t, read with kadm.
func committed(t *testing.T, c *testCluster, group string) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(c.client())
	fetched, err := adm.FetchOffsets(t.Context(), group)
	if err != nil {
		t.Fatalf("fetch offsets of %q: %v", group, err)
	}
	out := map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			t.Fatalf("fetch offsets of %q: %s/%d: %v", group, o.Topic, o.Partition, o.Err)
		}
		if o.Topic == "t" && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

func describeGroupJSON(t *testing.T, c *testCluster, group string) groupDescription {
	t.Helper()
	var ds []groupDescription
	out := c.ok("", "group", "describe", group, "--json")
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("describe --json: %v\n%s", err, out)
	}
	if len(ds) != 1 {
		t.Fatalf("describe --json returned %d groups", len(ds))
	}
	return ds[0]
}

func listGroupsJSON(t *testing.T, c *testCluster, args ...string) []groupSummary {
	t.Helper()
	var rows []groupSummary
	out := c.ok("", append([]string{"group", "list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	return rows
}

func ptr(n int64) *int64 { return &n }

// checkDescription compares a describe result with want; the member host is
// the broker's view of the client's address, so it is only checked to be
// there.
func checkDescription(t *testing.T, got, want groupDescription) {
	t.Helper()
	for i := range got.Members {
		if got.Members[i].Host == "" {
			t.Fatalf("member %d has no host: %+v", i, got.Members[i])
		}
		got.Members[i].Host = "host"
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(groupDescription{})); diff != "" {
		t.Fatalf("describe (-want +got):\n%s", diff)
	}
}

func TestGroupClassic(t *testing.T) {
	c := newGroupTestCluster(t)
	cl, leave := joinGroup(t, c, "g", map[int32]int64{0: 2})
	member, _ := cl.GroupMetadata()

	if out, want := c.ok("", "group", "list"), "GROUP  STATE   TYPE     PROTOCOL-TYPE  MEMBERS\n"+
		"g      Stable  classic  consumer       1\n"; out != want {
		t.Fatalf("list:\n%s\nwant:\n%s", out, want)
	}
	active := []groupSummary{{Group: "g", State: "Stable", Type: "classic", ProtocolType: "consumer", Members: 1}}
	for _, args := range [][]string{nil, {"--state", "stable"}, {"--state", "Empty,Stable"}, {"--type", "classic"}} {
		if diff := cmp.Diff(active, listGroupsJSON(t, c, args...)); diff != "" {
			t.Fatalf("list %v (-want +got):\n%s", args, diff)
		}
	}
	for _, args := range [][]string{{"--state", "Empty"}, {"--type", "consumer"}} {
		if rows := listGroupsJSON(t, c, args...); len(rows) != 0 {
			t.Fatalf("list %v = %+v, want none", args, rows)
		}
	}

	// Partition 1 has no commit: it is listed, with no lag.
	checkDescription(t, describeGroupJSON(t, c, "g"), groupDescription{
		Group: "g", Type: "classic", State: "Stable", ProtocolType: "consumer", Protocol: "range",
		Members: []groupMember{{MemberID: member, ClientID: "reader", Host: "host",
			Assignment: []topicPartitions{{Topic: "t", Partitions: []int32{0, 1}}}}},
		Offsets: []partitionLag{
			{Topic: "t", Partition: 0, CommittedOffset: ptr(2), LogEndOffset: ptr(3), Lag: ptr(1), MemberID: member},
			{Topic: "t", Partition: 1, LogEndOffset: ptr(2), MemberID: member},
		},
		TotalLag: 1,
	})
	text := c.ok("", "group", "describe", "g")
	for _, want := range []string{
		"Group: g\tType: classic\tState: Stable\tProtocol: consumer/range\tMembers: 1\tLag: 1\n",
		"MEMBER-ID", "  reader  ", "  t:0,1\n",
		"TOPIC  PARTITION  COMMITTED-OFFSET  LOG-END-OFFSET  LAG  MEMBER-ID",
		"t      0          2                 3               1    " + member + "  -\n",
		"t      1          -                 2               -    " + member + "  -\n",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("describe output lacks %q:\n%s", want, text)
		}
	}

	// A dry run works on an active group, with a warning; it commits
	// nothing. Executing and deleting are refused.
	r := c.run("", "group", "reset-offsets", "g", "--topic", "t", "--to-earliest")
	if r.err != nil {
		t.Fatalf("dry run on an active group: %v", r.err)
	}
	if want := "TOPIC  PARTITION  CURRENT-OFFSET  NEW-OFFSET\nt      0          2               0\nt      1          -               0\n"; r.stdout != want {
		t.Fatalf("dry run printed:\n%s\nwant:\n%s", r.stdout, want)
	}
	if !strings.Contains(r.stderr, `warning: group "g" has active members (state Stable, members: 1)`) ||
		!strings.Contains(r.stderr, "dry run: nothing committed") {
		t.Fatalf("dry run stderr = %q", r.stderr)
	}
	if got := committed(t, c, "g"); !cmp.Equal(got, map[int32]int64{0: 2}) {
		t.Fatalf("commits after a dry run = %v", got)
	}
	c.fails(`group "g" has active members (state Stable, members: 1)`,
		"group", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--execute")
	c.fails(`group "g" has active members`, "group", "delete", "g")
	if got := committed(t, c, "g"); !cmp.Equal(got, map[int32]int64{0: 2}) {
		t.Fatalf("commits after a refused reset = %v", got)
	}

	leave()
	empty := []groupSummary{{Group: "g", State: "Empty", Type: "classic", ProtocolType: "consumer"}}
	if diff := cmp.Diff(empty, listGroupsJSON(t, c, "--state", "Empty")); diff != "" {
		t.Fatalf("list after the member left (-want +got):\n%s", diff)
	}
	checkDescription(t, describeGroupJSON(t, c, "g"), groupDescription{
		Group: "g", Type: "classic", State: "Empty", ProtocolType: "consumer", Members: []groupMember{},
		Offsets: []partitionLag{
			{Topic: "t", Partition: 0, CommittedOffset: ptr(2), LogEndOffset: ptr(3), Lag: ptr(1)},
			{Topic: "t", Partition: 1, LogEndOffset: ptr(2)},
		},
		TotalLag: 1,
	})

	resets := []struct {
		args []string
		want map[int32]int64
	}{
		{[]string{"--topic", "t", "--to-earliest"}, map[int32]int64{0: 0, 1: 0}},
		{[]string{"--all-topics", "--to-latest"}, map[int32]int64{0: 3, 1: 2}},
		{[]string{"--topic", "t:0", "--to-offset", "1"}, map[int32]int64{0: 1, 1: 2}},
		{[]string{"--topic", "t", "--to-offset", "7"}, map[int32]int64{0: 3, 1: 2}}, // clamped to the end
		{[]string{"--all-topics", "--shift-by", "-2"}, map[int32]int64{0: 1, 1: 0}},
		{[]string{"--topic", "t:1", "--shift-by", "-5"}, map[int32]int64{0: 1, 1: 0}}, // clamped to the start
		{[]string{"--topic", "t:1,0", "--shift-by", "1"}, map[int32]int64{0: 2, 1: 1}},
		{[]string{"--topic", "t", "--to-datetime", "1970-01-01T00:00:02Z"}, map[int32]int64{0: 1, 1: 1}},
		{[]string{"--topic", "t", "--to-datetime", "2500"}, map[int32]int64{0: 2, 1: 2}}, // p1: nothing later, so the end
	}
	for _, tc := range resets {
		before := committed(t, c, "g")
		args := append([]string{"group", "reset-offsets", "g"}, tc.args...)
		var plan []resetRow
		if err := json.Unmarshal([]byte(c.ok("", append(args, "--json")...)), &plan); err != nil {
			t.Fatalf("%v --json: %v", tc.args, err)
		}
		planned := map[int32]int64{}
		for k, v := range before {
			planned[k] = v
		}
		for _, row := range plan {
			planned[row.Partition] = row.NewOffset
			cur, had := before[row.Partition]
			if (row.CurrentOffset != nil) != had || had && *row.CurrentOffset != cur {
				t.Fatalf("%v: plan row %+v, want the current offset of %v", tc.args, row, before)
			}
		}
		if !cmp.Equal(planned, tc.want) {
			t.Fatalf("%v: plan %+v, want %v", tc.args, plan, tc.want)
		}
		if got := committed(t, c, "g"); !cmp.Equal(got, before) {
			t.Fatalf("%v: dry run changed commits from %v to %v", tc.args, before, got)
		}
		r := c.run("", append(args, "--execute")...)
		if r.err != nil {
			t.Fatalf("%v --execute: %v", tc.args, r.err)
		}
		if want := "committed new offsets for " + strconv.Itoa(len(plan)) + ` partitions of group "g"`; !strings.Contains(r.stderr, want) {
			t.Fatalf("%v --execute stderr = %q, want %q", tc.args, r.stderr, want)
		}
		if got := committed(t, c, "g"); !cmp.Equal(got, tc.want) {
			t.Fatalf("%v --execute: commits %v, want %v", tc.args, got, tc.want)
		}
	}
	r = c.run("", "group", "reset-offsets", "g", "--topic", "t:1", "--to-offset", "9")
	if !strings.Contains(r.stderr, `warning: topic "t" partition 1: offset 9 is outside the log [0, 2]; using 2`) {
		t.Fatalf("clamping stderr = %q", r.stderr)
	}

	if out := c.ok("", "group", "delete", "g"); out != `deleted group "g"`+"\n" {
		t.Fatalf("delete printed %q", out)
	}
	if out := c.ok("", "group", "list"); out != "GROUP  STATE  TYPE  PROTOCOL-TYPE  MEMBERS\n" {
		t.Fatalf("list after delete:\n%s", out)
	}
	c.fails(`group "g" does not exist`, "group", "describe", "g")
	c.fails(`group "g" does not exist`, "group", "delete", "g")
}

func TestGroupConsumerProtocol(t *testing.T) {
	c := newGroupTestCluster(t)
	cl, leave := joinGroup(t, c, "next", map[int32]int64{0: 3, 1: 1}, kgo.ServerSideBalancer())
	member, _ := cl.GroupMetadata()

	active := []groupSummary{{Group: "next", State: "Stable", Type: "consumer", ProtocolType: "consumer", Members: 1}}
	if diff := cmp.Diff(active, listGroupsJSON(t, c, "--type", "consumer")); diff != "" {
		t.Fatalf("list --type consumer (-want +got):\n%s", diff)
	}
	if rows := listGroupsJSON(t, c, "--type", "classic"); len(rows) != 0 {
		t.Fatalf("list --type classic = %+v, want none", rows)
	}
	checkDescription(t, describeGroupJSON(t, c, "next"), groupDescription{
		Group: "next", Type: "consumer", State: "Stable", ProtocolType: "consumer", Protocol: "range",
		Members: []groupMember{{MemberID: member, ClientID: "reader", Host: "host",
			Assignment: []topicPartitions{{Topic: "t", Partitions: []int32{0, 1}}}}},
		Offsets: []partitionLag{
			{Topic: "t", Partition: 0, CommittedOffset: ptr(3), LogEndOffset: ptr(3), Lag: ptr(0), MemberID: member},
			{Topic: "t", Partition: 1, CommittedOffset: ptr(1), LogEndOffset: ptr(2), Lag: ptr(1), MemberID: member},
		},
		TotalLag: 1,
	})

	c.fails(`group "next" has active members`, "group", "reset-offsets", "next", "--all-topics", "--to-earliest", "--execute")
	c.fails(`group "next" has active members`, "group", "delete", "next")
	leave()
	c.ok("", "group", "reset-offsets", "next", "--all-topics", "--to-earliest", "--execute")
	if got := committed(t, c, "next"); !cmp.Equal(got, map[int32]int64{0: 0, 1: 0}) {
		t.Fatalf("commits after reset = %v", got)
	}
	c.ok("", "group", "delete", "next")
	c.fails(`group "next" does not exist`, "group", "describe", "next")
}

func TestGroupErrors(t *testing.T) {
	c := newGroupTestCluster(t)
	c.fails(`invalid --state "bogus": want one of Empty, Stable`, "group", "list", "--state", "bogus")
	c.fails(`invalid --type "streams": want one of classic, consumer, share`, "group", "list", "--type", "streams")
	c.fails(`group "nope" does not exist`, "group", "describe", "nope")
	c.fails(`group "nope" does not exist`, "group", "delete", "nope")

	reset := func(args ...string) []string { return append([]string{"group", "reset-offsets", "g"}, args...) }
	c.fails("give exactly one of --to-earliest", reset("--topic", "t")...)
	c.fails("give exactly one of --to-earliest", reset("--topic", "t", "--to-earliest", "--to-latest")...)
	c.fails("nothing to reset: give --topic or --all-topics", reset("--to-earliest")...)
	c.fails("--topic and --all-topics cannot be used together", reset("--topic", "t", "--all-topics", "--to-earliest")...)
	c.fails("--execute and --dry-run cannot be used together", reset("--topic", "t", "--to-earliest", "--execute", "--dry-run")...)
	c.fails(`invalid --topic "t:x": partition "x" is not a non-negative integer`, reset("--topic", "t:x", "--to-earliest")...)
	c.fails(`invalid --topic "t:": want TOPIC or TOPIC:P,P`, reset("--topic", "t:", "--to-earliest")...)
	c.fails(`invalid --to-datetime "yesterday"`, reset("--topic", "t", "--to-datetime", "yesterday")...)
	c.fails("invalid --to-offset -1: must not be negative", reset("--topic", "t", "--to-offset", "-1")...)
	c.fails(`topic "missing" does not exist`, reset("--topic", "missing", "--to-earliest")...)
	c.fails(`topic "t" has no partition 9 (it has 2)`, reset("--topic", "t:9", "--to-earliest")...)
	c.fails(`group "g" has no committed offsets to reset`, reset("--all-topics", "--to-earliest")...)
	c.fails(`topic "t" partition 0: no committed offset to shift`, reset("--topic", "t", "--shift-by", "1")...)

	// A group that does not exist yet is inactive: resetting creates it.
	c.ok("", reset("--topic", "t:1", "--to-latest", "--execute")...)
	if got := committed(t, c, "g"); !cmp.Equal(got, map[int32]int64{1: 2}) {
		t.Fatalf("commits of a new group = %v", got)
	}
}

func TestResetTarget(t *testing.T) {
	// The log spans [10, 20]; offset 15 is the first at or after the time.
	for _, tc := range []struct {
		name           string
		spec           resetSpec
		committed      int64
		offset, wanted int64
		err            string
	}{
		{name: "earliest", spec: resetSpec{kind: resetToEarliest}, committed: 12, offset: 10, wanted: 10},
		{name: "latest", spec: resetSpec{kind: resetToLatest}, committed: -1, offset: 20, wanted: 20},
		{name: "datetime", spec: resetSpec{kind: resetToDatetime, value: 99}, committed: -1, offset: 15, wanted: 15},
		{name: "offset inside", spec: resetSpec{kind: resetToOffset, value: 13}, committed: 12, offset: 13, wanted: 13},
		{name: "offset below", spec: resetSpec{kind: resetToOffset, value: 3}, committed: 12, offset: 10, wanted: 3},
		{name: "offset above", spec: resetSpec{kind: resetToOffset, value: 30}, committed: 12, offset: 20, wanted: 30},
		{name: "shift back", spec: resetSpec{kind: resetShiftBy, value: -2}, committed: 12, offset: 10, wanted: 10},
		{name: "shift past start", spec: resetSpec{kind: resetShiftBy, value: -5}, committed: 12, offset: 10, wanted: 7},
		{name: "shift past end", spec: resetSpec{kind: resetShiftBy, value: 50}, committed: 12, offset: 20, wanted: 62},
		{name: "shift saturates", spec: resetSpec{kind: resetShiftBy, value: 1<<63 - 1}, committed: 12, offset: 20, wanted: 1<<63 - 1},
		{name: "shift without commit", spec: resetSpec{kind: resetShiftBy, value: 1}, committed: -1, err: "no committed offset to shift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offset, wanted, err := resetTarget(tc.spec, tc.committed, 10, 20, 15)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || offset != tc.offset || wanted != tc.wanted {
				t.Fatalf("= %d, %d, %v; want %d, %d", offset, wanted, err, tc.offset, tc.wanted)
			}
		})
	}
}

func TestParseTopicSpecs(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want map[string][]int32
		err  string
	}{
		{in: []string{"a"}, want: map[string][]int32{"a": nil}},
		{in: []string{"a:2,0", "a:0,1", "b"}, want: map[string][]int32{"a": {2, 0, 1}, "b": nil}},
		{in: []string{"a:1", "a"}, want: map[string][]int32{"a": nil}},
		{in: []string{"a", "a:1"}, want: map[string][]int32{"a": nil}},
		{in: []string{":1"}, err: `invalid --topic ":1": want TOPIC or TOPIC:P,P`},
		{in: []string{"a:-1"}, err: `invalid --topic "a:-1": partition "-1" is not a non-negative integer`},
	} {
		got, err := parseTopicSpecs(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Fatalf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Fatalf("%q = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
