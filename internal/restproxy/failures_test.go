package restproxy

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
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
//   - the v2 instance, which committed before the kill and is read all
//     along, answers every read 200, reads every record after its commit
//     exactly once (or again from its commit, had a rebalance restarted
//     it), and commits again after the failover.
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

	// The instance reads all along, through the kill.
	rd := startReading(base)
	lines, stall := streamThroughKill(t, tp, dc.Node(coord), n)
	t.Logf("stream of %d records: the longest wait for a result line was %v (the kill at record %d)", n, stall, n/3)
	answered := checkStreamResults(t, lines)

	// The log, read to the high watermark by an independent client: the
	// records answered 200 each once at its offset, in the order sent.
	log := readLog(t, dc.Addrs(), "failover")
	checkLog(t, log, before, answered)

	checkAdminDuringOutage(t, tp, coord)

	// The instance, whose coordinator and partition leader died, read
	// every record after its commit, each once (or, had a rebalance
	// restarted it at the commit, the records from there again), and
	// commits again.
	after, failed, gap := rd.until(t, len(log)-before)
	for _, f := range failed {
		t.Errorf("a read during the failover: %s", f)
	}
	switch {
	case slices.Equal(after, log[before:]):
		t.Logf("the instance read the %d records after its commit once each; the longest wait between two reads with records %v", len(after), gap)
	case len(after) > len(log)-before && slices.Equal(after[len(after)-(len(log)-before):], log[before:]) &&
		slices.Equal(after[:len(after)-(len(log)-before)], log[before:before+len(after)-(len(log)-before)]):
		t.Logf("the instance read %d records, then again from its commit: a rebalance during the failover", len(after)-(len(log)-before))
	default:
		t.Fatalf("the instance read %d records, not the log's %d from offset %d in order", len(after), len(log)-before, before)
	}
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
	// The test's own admin client may still hold a connection to the
	// dead coordinator (EOF): asked again, it finds the new one.
	var offsets kadm.OffsetResponses
	eventually(t, "the test's client reads the commit", func() bool {
		var err error
		offsets, err = tp.admin.FetchOffsets(ctx, failoverGroup)
		return err == nil
	})
	if o, ok := offsets.Lookup("failover", 0); !ok || o.At != int64(len(log)) {
		t.Fatalf("committed %+v, want %d", o, len(log))
	}
}

// reading is a v2 instance read again and again in the background.
type reading struct {
	base string
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	values []string      // guarded by mu
	failed []string      // reads not answered 200, guarded by mu
	gap    time.Duration // the longest wait between reads with records, guarded by mu
}

func startReading(base string) *reading {
	r := &reading{base: base, stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

func (r *reading) run() {
	defer close(r.done)
	last := time.Now()
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		vs, err := readOnce(r.base)
		r.mu.Lock()
		if err != nil {
			r.failed = append(r.failed, err.Error())
		} else if len(vs) > 0 {
			r.values = append(r.values, vs...)
			r.gap = max(r.gap, time.Since(last))
			last = time.Now()
		}
		r.mu.Unlock()
	}
}

// until waits until n records were read (90 s at most), reads once
// more, so a record read twice would show, and stops.
func (r *reading) until(t *testing.T, n int) ([]string, []string, time.Duration) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.values)
		r.mu.Unlock()
		if got >= n {
			break
		}
		if time.Now().After(deadline) {
			close(r.stop)
			<-r.done
			t.Fatalf("the instance read %d of %d records within 90s", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // at least one more read, of 500 ms
	close(r.stop)
	<-r.done
	return r.values, r.failed, r.gap
}

// readOnce is one binary read of an instance: the values, or what was
// answered when not 200.
func readOnce(base string) ([]string, error) {
	req, err := http.NewRequest("GET", base+"/records?timeout=500", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", v2BinaryType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%d %s", resp.StatusCode, raw)
	}
	var recs []v2Rec
	if err := json.Unmarshal(raw, &recs); err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	var out []string
	for _, r := range recs {
		v, err := base64.StdEncoding.DecodeString(strings.Trim(string(r.Value), `"`))
		if err != nil {
			return nil, err
		}
		out = append(out, string(v))
	}
	return out, nil
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
			from, to := max(0, int(off)-3), min(len(log), int(off)+4)
			t.Fatalf("%s answered at offset %d, which the log (%d records) does not hold: offsets %d.. hold %v; %s is at %d; %s",
				v, off, len(log), from, log[from:to], v, slices.Index(log, v), logAnomalies(log, before, answered))
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

// logAnomalies says where the log departs from the records answered:
// the offsets whose record is not the one answered there, and the values
// the log holds twice or misses.
func logAnomalies(log []string, before int, answered map[int64]string) string {
	var wrong []string
	for off := before; off < len(log); off++ {
		if v, ok := answered[int64(off)]; ok && v != log[off] && len(wrong) < 5 {
			wrong = append(wrong, fmt.Sprintf("%d: %s not %s", off, log[off], v))
		}
	}
	count := map[string]int{}
	for _, v := range log {
		count[v]++
	}
	var twice, missing []string
	for v, c := range count {
		if c > 1 {
			twice = append(twice, fmt.Sprintf("%s x%d at %d", v, c, slices.Index(log, v)))
		}
	}
	for _, v := range answered {
		if count[v] == 0 {
			missing = append(missing, v)
		}
	}
	return fmt.Sprintf("first offsets not as answered %v; twice %v; answered but missing %v", wrong, twice, missing)
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

// restProcess is a `samsa rest` process: its URL and the process.
type restProcess struct {
	url  string
	proc *exec.Cmd
}

// startRestProcess runs `samsa rest` against broker on listener
// (127.0.0.1:0 picks a port) and waits until it serves.
func startRestProcess(t *testing.T, broker, listener string) *restProcess {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	proc := exec.Command(bin, "rest", "--bootstrap-server", broker, "--listener", listener)
	stdout, err := proc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	proc.Stderr = &stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Process.Kill(); proc.Wait() })
	first := make(chan string, 1)
	go func() { // ends with the process's stdout
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- line
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-first:
		m := regexp.MustCompile(`rest proxy serving on (http://[0-9.:]+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("samsa rest: first line %q; stderr:\n%s", line, stderr.String())
		}
		return &restProcess{url: m[1], proc: proc}
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa rest did not start; stderr:\n%s", stderr.String())
	}
	return nil
}

// TestRestProxyKilled kills a `samsa rest` process (SIGKILL) holding a v2
// consumer instance that read 100 records and committed 50, and restarts
// it on the same port: the instance, held in the dead process's memory
// only, is 404 40403 there; its member stays in the group until its
// session times out; a new instance in the group then reads from the
// commit: r50..r99, none lost, none skipped.
func TestRestProxyKilled(t *testing.T) {
	broker := startBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	admin := kadm.NewClient(cl)
	createTopicN(t, admin, "pk", 1)
	var recs []*kgo.Record
	for i := range 100 {
		recs = append(recs, &kgo.Record{Topic: "pk", Value: []byte(fmt.Sprintf("r%d", i))})
	}
	produceAll(t, broker, recs...)

	a := startRestProcess(t, broker, "127.0.0.1:0")
	const group = "pk-group"
	create := `{"name":"%s","format":"binary","auto.offset.reset":"earliest","auto.commit.enable":"false"}`
	old := a.url + "/consumers/" + group + "/instances/c1"
	v2Do(t, "POST", a.url+"/consumers/"+group, "", fmt.Sprintf(create, "c1")).want(t, "create c1", 200, "")
	v2Do(t, "POST", old+"/subscription", "", `{"topics":["pk"]}`).want(t, "subscribe c1", 204, "")
	if got := valuesOf(t, readV2Until(t, old, v2BinaryType, 100)); !slices.Equal(got, seq("r", 0, 100)) {
		t.Fatalf("c1 read %v", got)
	}
	v2Do(t, "POST", old+"/offsets", "", `{"offsets":[{"topic":"pk","partition":0,"offset":49}]}`).want(t, "commit r49", 200, `[]`)

	if err := a.proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	a.proc.Wait()
	killed := time.Now()
	described, err := admin.DescribeGroups(t.Context(), group)
	if err != nil || len(described[group].Members) != 1 {
		t.Fatalf("the group right after the kill: %+v %v", described[group], err)
	}

	b := startRestProcess(t, broker, strings.TrimPrefix(a.url, "http://"))
	v2Do(t, "GET", old+"/records", v2BinaryType, "").wantError(t, "the old instance's read", 404, codeConsumerInstanceNotFound)
	v2Do(t, "POST", old+"/offsets", "", "").wantError(t, "the old instance's commit", 404, codeConsumerInstanceNotFound)
	v2Do(t, "DELETE", old, "", "").wantError(t, "the old instance's delete", 404, codeConsumerInstanceNotFound)

	base := b.url + "/consumers/" + group + "/instances/c2"
	v2Do(t, "POST", b.url+"/consumers/"+group, "", fmt.Sprintf(create, "c2")).want(t, "create c2", 200, "")
	v2Do(t, "POST", base+"/subscription", "", `{"topics":["pk"]}`).want(t, "subscribe c2", 204, "")
	var got []string
	deadline := time.Now().Add(120 * time.Second)
	for len(got) < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("c2 read %d records within 120s of the kill", len(got))
		}
		got = append(got, valuesOf(t, readV2(t, base, v2BinaryType))...)
	}
	// The dead member holds the partition until its session (franz-go's
	// 45 s) ends; 30 s leaves room for the reads' own timing.
	if took := time.Since(killed); took < 30*time.Second {
		t.Fatalf("c2 read records %v after the kill, before the old member's session could end", took)
	} else {
		t.Logf("c2 read its first records %v after the kill", took)
	}
	got = append(got, valuesOf(t, readV2(t, base, v2BinaryType))...)
	if !slices.Equal(got, seq("r", 50, 100)) {
		t.Fatalf("c2 read %v, want r50..r99", got)
	}
	described, err = admin.DescribeGroups(t.Context(), group)
	if err != nil || len(described[group].Members) != 1 {
		t.Fatalf("the group after c2 joined: %+v %v", described[group], err)
	}
}

// TestRestRegistryUnreachable produces avro over v2 and v3 (single and
// streamed) while the registry URL points at a port nothing listens on,
// and at one that accepts connections and never answers: each is 422
// 42207 (Confluent's SchemaManagerImpl maps the registry client's
// IOException to messageSerializationException), within the request
// timeout, and the proxy serves on.
func TestRestRegistryUnreachable(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	go func() { // accepts and never answers, as a registry stuck in a GC pause or behind a dead route
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := hung.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	broker := startBroker(t)
	const timeout = 3 * time.Second
	schema := `{"type":"record","name":"R","fields":[{"name":"id","type":"int"}]}`
	for _, reg := range []struct{ name, url string }{{"dead port", deadURL}, {"hung", "http://" + hung.Addr().String()}} {
		t.Run(reg.name, func(t *testing.T) {
			p, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(broker)}, SchemaRegistryURL: reg.url, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(p.Handler())
			defer func() { srv.Close(); p.Close() }()
			tp := &testProxy{broker: broker, url: srv.URL}
			md, err := p.shared.admin.BrokerMetadata(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			tp.clusterID = md.Cluster
			if code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"reg","partitions_count":1}`); code != 201 && code != 400 {
				t.Fatalf("create: %d %v", code, got)
			}
			within := func(what string, start time.Time) {
				if took := time.Since(start); took > timeout+2*time.Second {
					t.Fatalf("%s took %v, past the %v timeout", what, took, timeout)
				} else {
					t.Logf("%s answered in %v", what, took)
				}
			}

			start := time.Now()
			status, body := tp.doV2(t, "POST", "/topics/reg", v2Type("avro"), "", fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"id":1}}]}`, schema))
			within("v2 avro", start)
			if m, _ := body.(map[string]any); status != 422 || m["error_code"] != float64(codeSerialization) || m["message"] == "" {
				t.Fatalf("v2 avro: %d %v", status, body)
			}
			start = time.Now()
			status, body = tp.doV2(t, "POST", "/topics/reg", v2Type("avro"), "", `{"value_schema_id":1,"records":[{"value":{"id":1}}]}`)
			within("v2 avro by id", start)
			if m, _ := body.(map[string]any); status != 422 || m["error_code"] != float64(codeSerialization) {
				t.Fatalf("v2 avro by id: %d %v", status, body)
			}
			record := fmt.Sprintf(`{"value":{"type":"AVRO","schema":%q,"data":{"id":1}}}`, schema)
			start = time.Now()
			code, got := tp.do(t, "POST", tp.v3("/topics/reg/records"), jsonType, record)
			within("v3 AVRO", start)
			if code != 422 || field(got, "error_code") != float64(codeSerialization) {
				t.Fatalf("v3 AVRO: %d %v", code, got)
			}
			// A stream: each record its 42207 line, a BINARY one between
			// them still produced.
			start = time.Now()
			s := openStreamWith(t, tp, "reg", record)
			s.send(t, `{"value":{"type":"BINARY","data":"AQI="}}`)
			s.send(t, record)
			for i, want := range []float64{codeSerialization, 200, codeSerialization} {
				if r := s.next(t); r["error_code"] != want {
					t.Fatalf("stream line %d: %v, want error_code %v", i, r, want)
				}
			}
			s.end(t)
			t.Logf("stream of 3 records (2 avro) answered in %v", time.Since(start))
			code, got = tp.do(t, "GET", tp.v3("/topics/reg"), "", "")
			expect(t, "served on", code, got, 200, "")
		})
	}
}

// TestRestStreamClientGone: a client that disconnects mid-stream (its
// connection closed with 2,000 records sent and 100 answers read) ends the
// stream: the handler returns once the records in flight are done (the
// server closes within 15 s), the log holds every record answered 200
// once, in the order sent, nothing twice, and the proxy serves on.
func TestRestStreamClientGone(t *testing.T) {
	broker := startBroker(t)
	p, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(broker)}, Timeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p.Handler())
	md, err := p.shared.admin.BrokerMetadata(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tp := &testProxy{broker: broker, url: srv.URL, clusterID: md.Cluster, admin: p.shared.admin}
	createTopicN(t, tp.admin, "gone", 1)

	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	const n = 2000
	go func() {
		for i := range n {
			if _, err := io.WriteString(pw, fmt.Sprintf(`{"value":{"type":"STRING","data":"s%d"}}`+"\n", i)); err != nil {
				return
			}
		}
	}()
	req, err := http.NewRequestWithContext(ctx, "POST", tp.url+tp.v3("/topics/gone/records"), pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", jsonType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	answered := map[int64]string{}
	for i := range 100 {
		if !sc.Scan() {
			t.Fatalf("stream ended after %d answers: %v", i, sc.Err())
		}
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r["error_code"] != float64(200) {
			t.Fatalf("answer %d: %s", i, sc.Bytes())
		}
		answered[int64(r["offset"].(float64))] = fmt.Sprintf("s%d", i)
	}
	cancel() // the client goes: its connection is closed
	pw.CloseWithError(io.ErrClosedPipe)
	resp.Body.Close()

	start := time.Now()
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }() // waits for the stream's handler
	select {
	case <-closed:
		t.Logf("the stream's handler returned %v after the client left", time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatal("the stream's handler still runs 15s after its client left")
	}
	log := readLog(t, []string{broker}, "gone")
	checkLog(t, log, 0, answered)
	t.Logf("%d records of %d sent landed; the client read 100 answers", len(log), n)

	srv2 := httptest.NewServer(p.Handler())
	defer srv2.Close()
	tp.url = srv2.URL
	code, got := tp.do(t, "POST", tp.v3("/topics/gone/records"), jsonType, `{"value":{"type":"STRING","data":"after"}}`)
	expect(t, "produce after", code, got, 200, "")
}
