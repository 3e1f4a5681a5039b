package restproxy

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// Failure tests: what the proxy does when a broker, the group coordinator,
// the proxy itself or the Schema Registry fails mid-operation
// (docs/DESIGN-restproxy.md, Failures). Each runs real processes and kills
// them with SIGKILL.

// failoverGroup is the v2 group of TestRestBrokerFailover.
const failoverGroup = "failover-group"

// TestRestBrokerFailover runs a 3-broker cluster and kills, with SIGKILL,
// the broker that leads a partition (RF 3, min.insync.replicas 2) and
// coordinates the v2 consumer group reading it, midway through a streaming
// produce of 3,000 records:
//   - the stream answers every record with exactly one line; each record
//     answered 200 is in the log exactly once, at its answered offset, in
//     the order sent; an error line carries a Confluent code, never a 5xx
//     other than the retriable 50003;
//   - with the broker down, v3's brokers, topics and partitions answer
//     (no 5xx), without the dead broker and with the partition's new leader;
//   - the v2 instance, which committed before the kill, reads every record
//     after its commit exactly once, and commits again after the failover.
func TestRestBrokerFailover(t *testing.T) {
	tp, dc := startClusterProxy(t, 3)
	ctx := t.Context()

	// The broker killed leads the partition and coordinates the group: the
	// topic's replicas start with the group's coordinator.
	var coord int32
	eventually(t, "the group's coordinator", func() bool {
		resp := tp.admin.FindGroupCoordinators(ctx, failoverGroup)
		c, ok := resp[failoverGroup]
		coord = c.NodeID
		return ok && c.Err == nil
	})
	replicas := []int32{coord}
	for id := int32(1); id <= 3; id++ {
		if id != coord {
			replicas = append(replicas, id)
		}
	}
	code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, fmt.Sprintf(
		`{"topic_name":"failover","replicas_assignments":{"0":[%d,%d,%d]},"configs":[{"name":"min.insync.replicas","value":"2"}]}`,
		replicas[0], replicas[1], replicas[2]))
	expect(t, "create", code, got, 201, "")
	eventually(t, "the coordinator leads the partition", func() bool { return leaderOf(t, tp.admin, "failover") == coord })

	// The v2 instance reads and commits the first 200 records before the kill.
	base := tp.url + "/consumers/" + failoverGroup + "/instances/c1"
	v2Do(t, "POST", tp.url+"/consumers/"+failoverGroup, "", `{"name":"c1","format":"binary","auto.offset.reset":"earliest","auto.commit.enable":"false"}`).want(t, "create", 200, "")
	v2Do(t, "POST", base+"/subscription", "", `{"topics":["failover"]}`).want(t, "subscribe", 204, "")
	const before, n = 200, 3000
	var first []string
	for i := range before {
		first = append(first, fmt.Sprintf(`{"value":{"type":"STRING","data":"p%d"}}`, i))
	}
	// A broker that has not applied the topic's creation yet answers
	// 40403 for it (no record written): p0 is sent until one that has
	// answers 200.
	eventually(t, "p0 produced", func() bool {
		code, got := tp.do(t, "POST", tp.v3("/topics/failover/records"), jsonType, first[0])
		if code != 200 && code != 404 {
			t.Fatalf("p0: %d %v", code, got)
		}
		return code == 200
	})
	s := openStreamWith(t, tp, "failover", first[1])
	for _, r := range first[2:] {
		s.send(t, r)
	}
	for i := 1; i < before; i++ {
		if r := s.next(t); r["error_code"] != float64(200) {
			t.Fatalf("record p%d before the kill: %v", i, r)
		}
	}
	s.end(t)
	if got := valuesOf(t, readV2Until(t, base, v2BinaryType, before)); !slices.Equal(got, seq("p", 0, before)) {
		t.Fatalf("read before the kill: %v", got)
	}
	v2Do(t, "POST", base+"/offsets", "", "").want(t, "commit before the kill", 200, `[]`)

	lines, stall := streamThroughKill(t, tp, dc.Node(coord), n)
	t.Logf("stream of %d records: the longest wait for a result line was %v (the kill at record %d)", n, stall, n/3)
	answered := checkStreamResults(t, lines)

	// The log, read to the high watermark by an independent client: the
	// records answered 200 each once at its offset, in the order sent.
	log := readLog(t, dc.Addrs(), "failover")
	checkLog(t, log, before, answered)

	checkAdminDuringOutage(t, tp, coord)

	// The instance, whose coordinator and partition leader died, reads
	// every record after its commit once, then commits again.
	start := time.Now()
	var after []string
	deadline := time.Now().Add(90 * time.Second)
	for len(after) < len(log)-before {
		if time.Now().After(deadline) {
			t.Fatalf("the instance read %d of %d records after the failover", len(after), len(log)-before)
		}
		a := v2Do(t, "GET", base+"/records?timeout=500", v2BinaryType, "")
		if a.status != 200 {
			t.Fatalf("read after the failover: %d %v", a.status, a.body)
		}
		after = append(after, valuesOfAny(t, a.body)...)
	}
	if extra := valuesOfAny(t, v2Do(t, "GET", base+"/records?timeout=500", v2BinaryType, "").body); len(extra) != 0 {
		t.Fatalf("read %d records more than the log holds: %v", len(extra), extra)
	}
	if !slices.Equal(after, log[before:]) {
		t.Fatalf("the instance read %d records after the failover, not the log's %d from offset %d in order", len(after), len(log)-before, before)
	}
	t.Logf("the instance read the %d records after its commit in %v", len(after), time.Since(start))
	commitAttempts := 0
	eventually(t, "commit after the failover", func() bool {
		commitAttempts++
		a := v2Do(t, "POST", base+"/offsets", "", "")
		if a.status != 200 {
			t.Logf("commit after the failover: %d %v", a.status, a.body)
		}
		return a.status == 200
	})
	t.Logf("commit after the failover answered 200 at attempt %d", commitAttempts)
	offsets, err := tp.admin.FetchOffsets(ctx, failoverGroup)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("failover", 0); !ok || o.At != int64(len(log)) {
		t.Fatalf("committed %+v, want %d", o, len(log))
	}
}

// leaderOf is partition 0's leader as Metadata says, -1 when none.
func leaderOf(t *testing.T, admin *kadm.Client, topic string) int32 {
	t.Helper()
	md, err := admin.Metadata(t.Context(), topic)
	if err != nil {
		return -1
	}
	p, ok := md.Topics[topic].Partitions[0]
	if !ok || p.Err != nil {
		return -1
	}
	return p.Leader
}

// seq is prefix+from ... prefix+(to-1).
func seq(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

func valuesOf(t *testing.T, recs []v2Rec) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		v, err := base64.StdEncoding.DecodeString(strings.Trim(string(r.Value), `"`))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(v))
	}
	return out
}

// valuesOfAny is valuesOf of a decoded read answer.
func valuesOfAny(t *testing.T, body any) []string {
	t.Helper()
	var out []string
	for _, r := range body.([]any) {
		v, err := base64.StdEncoding.DecodeString(r.(map[string]any)["value"].(string))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(v))
	}
	return out
}

// streamResult is one result line of a stream, when it came.
type streamResult struct {
	body map[string]any
	at   time.Time
}

// streamThroughKill streams n records s0... to topic failover, at most
// 100 unanswered at a time (so the stream spans the failover), and kills
// node once a third are answered. It answers every result line and the
// longest wait between two.
func streamThroughKill(t *testing.T, tp *testProxy, node *devcluster.Node, n int) ([]streamResult, time.Duration) {
	t.Helper()
	s := openStreamWith(t, tp, "failover", `{"value":{"type":"STRING","data":"s0"}}`)
	window := make(chan struct{}, 100)
	window <- struct{}{} // s0's place
	sent := make(chan error, 1)
	go func() {
		for i := 1; i < n; i++ {
			window <- struct{}{}
			if _, err := io.WriteString(s.body, fmt.Sprintf(`{"value":{"type":"STRING","data":"s%d"}}`+"\n", i)); err != nil {
				sent <- err
				return
			}
		}
		sent <- s.body.Close()
	}()
	var out []streamResult
	var stall time.Duration
	last := time.Now()
	for i := range n {
		r := streamResult{body: s.next(t), at: time.Now()}
		stall = max(stall, r.at.Sub(last))
		last = r.at
		out = append(out, r)
		<-window
		if i == n/3 {
			if err := node.Kill(); err != nil {
				t.Fatal(err)
			}
			t.Logf("killed broker %d after %d answers", node.ID, i+1)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if s.results.Scan() {
		t.Fatalf("a result past the last record: %s", s.results.Bytes())
	}
	return out, stall
}

// checkStreamResults checks each line is a record's success or a
// Confluent error (no 5xx but the retriable 50003) and answers the values
// answered 200 by offset.
func checkStreamResults(t *testing.T, lines []streamResult) map[int64]string {
	t.Helper()
	answered := map[int64]string{}
	errs := map[float64]int{}
	for i, l := range lines {
		code, _ := l.body["error_code"].(float64)
		if code == 200 {
			off := int64(l.body["offset"].(float64))
			if _, dup := answered[off]; dup {
				t.Fatalf("record s%d answered offset %d, as an earlier record", i, off)
			}
			answered[off] = fmt.Sprintf("s%d", i)
			continue
		}
		msg, _ := l.body["message"].(string)
		if code < 400 || (code >= 500 && code != codeKafkaRetriable) || msg == "" {
			t.Fatalf("record s%d: %v", i, l.body)
		}
		errs[code]++
	}
	t.Logf("%d of %d records answered 200, errors by code: %v", len(answered), len(lines), errs)
	return answered
}

// readLog reads partition 0 of topic from the start to its high watermark
// with an independent client and answers the values in offset order.
func readLog(t *testing.T, seeds []string, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	if end.Err != nil {
		t.Fatal(end.Err)
	}
	var log []string
	for int64(len(log)) < end.Offset {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(log), end.Offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(len(log)) {
				t.Fatalf("offset %d after %d records", r.Offset, len(log))
			}
			log = append(log, string(r.Value))
		})
	}
	return log
}

// checkLog checks the log holds p0..p<before-1>, then each record answered
// 200 at its offset, no value twice, and the stream's records in the
// order sent.
func checkLog(t *testing.T, log []string, before int, answered map[int64]string) {
	t.Helper()
	if !slices.Equal(log[:before], seq("p", 0, before)) {
		t.Fatalf("the log's first %d records: %v", before, log[:before])
	}
	for off, v := range answered {
		if off >= int64(len(log)) || log[off] != v {
			t.Fatalf("%s answered at offset %d, which the log (%d records) does not hold", v, off, len(log))
		}
	}
	seen := map[string]bool{}
	prev := -1
	for off, v := range log[before:] {
		if seen[v] {
			t.Fatalf("%s twice in the log (again at offset %d)", v, before+off)
		}
		seen[v] = true
		var i int
		if _, err := fmt.Sscanf(v, "s%d", &i); err != nil || i <= prev {
			t.Fatalf("%s at offset %d after s%d", v, before+off, prev)
		}
		prev = i
	}
	t.Logf("the log holds %d stream records; %d were answered 200", len(log)-before, len(answered))
}

// checkAdminDuringOutage: with broker dead down, v3's cluster, brokers,
// topics and partitions answer without a 5xx, the dead broker absent from
// the brokers and the partition led by another.
func checkAdminDuringOutage(t *testing.T, tp *testProxy, dead int32) {
	t.Helper()
	get := func(path string) any {
		code, got := tp.do(t, "GET", tp.v3(path), "", "")
		if code != 200 {
			t.Fatalf("GET %s with broker %d down: %d %v", path, dead, code, got)
		}
		return got
	}
	start := time.Now()
	eventually(t, fmt.Sprintf("broker %d absent from the brokers", dead), func() bool {
		for _, b := range field(get("/brokers"), "data").([]any) {
			if field(b, "broker_id") == float64(dead) {
				return false
			}
		}
		return true
	})
	t.Logf("broker %d left /brokers %v after the checks began", dead, time.Since(start))
	get("")
	if !slices.ContainsFunc(field(get("/topics"), "data").([]any), func(v any) bool { return field(v, "topic_name") == "failover" }) {
		t.Fatal("failover not listed with a broker down")
	}
	leader, _ := field(get("/topics/failover/partitions/0"), "leader", "related").(string)
	if leader == "" || strings.HasSuffix(leader, fmt.Sprintf("/replicas/%d", dead)) {
		t.Fatalf("partition 0's leader with broker %d down: %q", dead, leader)
	}
	for _, r := range field(get("/topics/failover/partitions/0/replicas"), "data").([]any) {
		if field(r, "broker_id") == float64(dead) && field(r, "is_leader") == true {
			t.Fatalf("the dead broker still leads: %v", r)
		}
	}
	code, got := tp.do(t, "GET", tp.v3(fmt.Sprintf("/brokers/%d", dead)), "", "")
	expect(t, "the dead broker", code, got, 404, fmt.Sprintf(`{"error_code":404,"message":"Broker %d cannot be found."}`, dead))
	v2Do(t, "GET", tp.url+"/brokers", "", "").want(t, "v2 brokers with one down", 200, "")
}
