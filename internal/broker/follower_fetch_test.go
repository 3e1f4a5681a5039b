package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-io/samsa/internal/config"
)

// Follower fetching (KIP-392): replica_selector.go and 01_fetch.go.

func TestReplicaSelectorClassRefusedUnlessKafkas(t *testing.T) {
	_, err := LoadConfig("", map[string]string{"replica.selector.class": "com.example.NearestReplicaSelector"})
	if !errors.Is(err, config.ErrNotSupported) ||
		!strings.Contains(err.Error(), "replica.selector.class: value com.example.NearestReplicaSelector is not supported yet (Samsa cannot load Java classes") ||
		!strings.Contains(err.Error(), config.RackAwareReplicaSelector) {
		t.Errorf("an unknown selector: %v", err)
	}
	if _, err := LoadConfig("", map[string]string{"replica.selector.class": config.RackAwareReplicaSelector}); err != nil {
		t.Errorf("Kafka's rack-aware selector refused: %v", err)
	}
	// Read-only in Kafka (not among DynamicBrokerConfig's reconfigurables),
	// so a dynamic update of Kafka's class is refused as Kafka refuses it;
	// another class is refused first for being one.
	b := startBrokerValues(t, map[string]string{"replica.selector.class": config.RackAwareReplicaSelector})
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	alter := func(class string) kadm.AlterConfigsResponse {
		rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "replica.selector.class", Value: &class}})
		if err != nil || len(rs) != 1 {
			t.Fatal(err, rs)
		}
		return rs[0]
	}
	wantErr(t, "dynamic replica.selector.class", alter(config.RackAwareReplicaSelector).Err, kerr.InvalidRequest)
	r := alter("com.example.NearestReplicaSelector")
	wantNotSupported(t, "dynamic replica.selector.class", r.Err, r.ErrMessage, "replica.selector.class", "Samsa cannot load Java classes")
}

// rackValues turns the rack-aware selector on and keeps the followers
// quick to learn each high watermark.
var rackValues = map[string]string{
	"replica.selector.class":    config.RackAwareReplicaSelector,
	"replica.fetch.backoff.ms":  "50",
	"replica.fetch.wait.max.ms": "100",
}

// rackFetch sends one sessionless Fetch of a partition from offset 0 at
// version v to node n, as a consumer in rack (empty: none).
func rackFetch(t *testing.T, n *clusterNode, v int16, topic string, partition int32, rack string) kmsg.FetchResponseTopicPartition {
	return rackFetchAt(t, n, v, topic, partition, 0, rack)
}

// rackFetchAt is rackFetch from offset.
func rackFetchAt(t *testing.T, n *clusterNode, v int16, topic string, partition int32, offset int64, rack string) kmsg.FetchResponseTopicPartition {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.Fetch.Int16(), v)
	cl := newFranz(t, n.get().Addr(), kgo.MaxVersions(vs))
	ts, ok := n.get().topics.byTopicName(topic)
	if !ok {
		t.Fatalf("node %d has no %s", n.id, topic)
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch, req.Rack = v, -1, 0, 1<<20, -1, rack
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, ts.id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.PartitionMaxBytes, rp.FetchOffset = partition, 1<<20, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch v%d from node %d: %+v", v, n.id, resp)
	}
	return resp.Topics[0].Partitions[0]
}

// TestClusterLeaderSendsConsumerToItsRack: on a cluster of racks a, b and
// c with the rack-aware selector, a leader outside rack b answers a
// rack-b consumer's Fetch v11+ with the rack-b follower as preferred read
// replica and no records; the follower serves that fetch below its own
// high watermark; a consumer without a rack, or a leader in rack b, gets
// records; below v11 a follower answers NOT_LEADER_OR_FOLLOWER.
func TestClusterLeaderSendsConsumerToItsRack(t *testing.T) {
	c := newRackCluster(t, rackValues, "a", "b", "c")
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, "racked"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("racked", 30, "r")
	c.waitReplicasEqual("racked", 3)
	rackB := c.node(2)
	for p := range int32(3) {
		leader := c.leaderOf("racked", p)
		got := rackFetch(t, leader, 12, "racked", p, "b")
		if leader == rackB {
			if got.ErrorCode != 0 || got.PreferredReadReplica != -1 || len(got.RecordBatches) == 0 {
				t.Errorf("partition %d, leader in rack b: code %d, preferred %d, %d bytes; want records from the leader", p, got.ErrorCode, got.PreferredReadReplica, len(got.RecordBatches))
			}
			continue
		}
		if got.ErrorCode != 0 || got.PreferredReadReplica != rackB.id || len(got.RecordBatches) != 0 || got.HighWatermark != 10 {
			t.Errorf("partition %d, leader %d: code %d, preferred %d, %d bytes, high watermark %d; want node %d, no records, 10",
				p, leader.id, got.ErrorCode, got.PreferredReadReplica, len(got.RecordBatches), got.HighWatermark, rackB.id)
		}
		if got := rackFetch(t, leader, 12, "racked", p, ""); got.PreferredReadReplica != -1 || len(got.RecordBatches) == 0 {
			t.Errorf("partition %d without a rack: preferred %d, %d bytes", p, got.PreferredReadReplica, len(got.RecordBatches))
		}
		if got := rackFetch(t, leader, 10, "racked", p, ""); got.PreferredReadReplica != -1 || len(got.RecordBatches) == 0 {
			t.Errorf("partition %d at v10: preferred %d, %d bytes", p, got.PreferredReadReplica, len(got.RecordBatches))
		}
		// The follower it names serves the same consumer.
		got = rackFetch(t, rackB, 12, "racked", p, "b")
		if got.ErrorCode != 0 || got.PreferredReadReplica != -1 || len(got.RecordBatches) == 0 || got.HighWatermark != 10 {
			t.Errorf("partition %d from follower %d: code %d, preferred %d, %d bytes, high watermark %d", p, rackB.id, got.ErrorCode, got.PreferredReadReplica, len(got.RecordBatches), got.HighWatermark)
		}
		if got := rackFetch(t, rackB, 10, "racked", p, ""); got.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Errorf("partition %d from follower %d at v10: code %d, want NOT_LEADER_OR_FOLLOWER", p, rackB.id, got.ErrorCode)
		}
		// Past the follower's log end: OFFSET_OUT_OF_RANGE with its bounds.
		if got := rackFetchAt(t, rackB, 12, "racked", p, 11, "b"); got.ErrorCode != kerr.OffsetOutOfRange.Code || got.HighWatermark != 10 {
			t.Errorf("partition %d from follower %d at offset 11: code %d, high watermark %d, want OFFSET_OUT_OF_RANGE, 10", p, rackB.id, got.ErrorCode, got.HighWatermark)
		}
	}
	// A broker with no replica of the partition serves nobody.
	if resp, err := adm.CreateTopic(ctx, 1, 1, nil, "single"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("single", 3, "s")
	for _, n := range c.nodes {
		if n != c.leaderOf("single", 0) {
			if got := rackFetch(t, n, 12, "single", 0, "b"); got.ErrorCode != kerr.NotLeaderForPartition.Code {
				t.Errorf("node %d, no replica: code %d, want NOT_LEADER_OR_FOLLOWER", n.id, got.ErrorCode)
			}
		}
	}
}

// topicBytesOut is what a node's samsa_topic_bytes_out_total says it
// served consumers of topic.
func topicBytesOut(t *testing.T, n *clusterNode, topic string) float64 {
	return scrapeRegistry(t, n.get()).sum("samsa_topic_bytes_out_total", `topic="`+topic+`"`)
}

// consumed is what a consumer saw of one partition.
type consumed struct {
	offsets []int64
	values  []string
}

// TestClusterRackConsumerReadsFromItsRack: a franz-go consumer in rack b
// (kgo.Rack) reads a topic of RF 3 over racks a, b and c; the rack-b
// broker serves (nearly) all its bytes, as each broker's bytes-out counter
// shows. Then the rack-b broker stops: the consumer goes back to the
// leaders and reads the rest, every record once and in order.
func TestClusterRackConsumerReadsFromItsRack(t *testing.T) {
	c := newRackCluster(t, rackValues, "a", "b", "c")
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}, "near"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	const first, second = 600, 300
	c.produceN("near", first, "before")
	c.waitReplicasEqual("near", 3)
	rackB := c.node(2)

	// franz-go keeps a partition on its preferred replica while that
	// broker is unreachable, until RecheckPreferredReplicaInterval (30 min
	// by default) sends it back to the leader, or a leader change moves it;
	// the Java consumer goes back to the leader as soon as the replica is
	// unavailable. A short recheck stands for the latter here.
	cl := c.liveClient(kgo.ConsumeTopics("near"), kgo.Rack("b"), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RecheckPreferredReplicaInterval(time.Second),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	seen := map[int32]*consumed{}
	total := 0
	poll := func(want int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for total < want {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("consumed %d of %d records", total, want)
			}
			fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				s := seen[r.Partition]
				if s == nil {
					s = &consumed{}
					seen[r.Partition] = s
				}
				s.offsets = append(s.offsets, r.Offset)
				s.values = append(s.values, string(r.Value))
				total++
			})
		}
	}
	poll(first)
	served := map[int32]float64{}
	var all float64
	for _, n := range c.nodes {
		served[n.id] = topicBytesOut(t, n, "near")
		all += served[n.id]
	}
	t.Logf("consumer bytes served by node: %v", served)
	if all == 0 || served[rackB.id] < 0.95*all {
		t.Errorf("rack b's broker served %.0f of %.0f consumer bytes (by node: %v); want nearly all", served[rackB.id], all, served)
	}

	c.stop(rackB)
	c.produceN("near", second, "after")
	poll(first + second)
	// The consumer may have read a little more than asked; nothing more
	// should come.
	ctx2, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	cl.PollFetches(ctx2).EachRecord(func(r *kgo.Record) {
		t.Errorf("record %s-%d@%d after all were read", r.Topic, r.Partition, r.Offset)
	})
	checkConsumedOnce(t, seen, first+second)
	after := 0.0
	for _, n := range c.nodes {
		if n != rackB {
			after += topicBytesOut(t, n, "near") - served[n.id]
		}
	}
	if after == 0 {
		t.Error("the leaders served nothing after rack b's broker stopped")
	}
}

// checkConsumedOnce checks that each partition's records came in offset
// order from 0 with no gap and no repeat, and that the "before" and
// "after" values each appear once in production order.
func checkConsumedOnce(t *testing.T, seen map[int32]*consumed, want int) {
	t.Helper()
	n := 0
	values := map[string]bool{}
	for p, s := range seen {
		for i, off := range s.offsets {
			if off != int64(i) {
				t.Errorf("partition %d: record %d has offset %d (gap or repeat)", p, i, off)
				break
			}
		}
		for _, v := range s.values {
			if values[v] {
				t.Errorf("partition %d: %s read twice", p, v)
			}
			values[v] = true
		}
		n += len(s.offsets)
	}
	if n != want || len(values) != want {
		t.Errorf("read %d records, %d distinct, want %d", n, len(values), want)
	}
}

// TestClusterRackConsumerReadCommittedFromAFollower: a read_committed
// consumer in rack b reads through the rack-b follower only what was
// committed: the follower's last stable offset and aborted transactions
// come from its own copy of the producers' batches and markers.
func TestClusterRackConsumerReadCommittedFromAFollower(t *testing.T) {
	values := maps.Clone(coordinatorValues)
	maps.Copy(values, rackValues)
	c := newRackCluster(t, values, "a", "b", "c")
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, "txn-near"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	rackB := c.node(2)
	// Placement gives each broker one leadership: write to a partition
	// led outside rack b, which the rack-b follower then serves.
	var part int32
	for c.leaderOf("txn-near", part) == rackB {
		part++
	}
	prod := c.liveClient(kgo.TransactionalID("near-txn"), kgo.DefaultProduceTopic("txn-near"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i, commit := range []bool{false, true, false, true} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 5 {
			v := fmt.Sprintf("aborted-%d-%d", i, j)
			if commit {
				v = fmt.Sprintf("committed-%d-%d", i, j)
			}
			if err := prod.ProduceSync(ctx, &kgo.Record{Partition: part, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	c.waitReplicasEqual("txn-near", 3)
	before := topicBytesOut(t, rackB, "txn-near")
	cl := c.liveClient(kgo.ConsumeTopics("txn-near"), kgo.Rack("b"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	var got []string
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for len(got) < 10 && pctx.Err() == nil {
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	want := []string{}
	for _, i := range []int{1, 3} {
		for j := range 5 {
			want = append(want, fmt.Sprintf("committed-%d-%d", i, j))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("read_committed through rack b: %v, want %v", got, want)
	}
	if topicBytesOut(t, rackB, "txn-near") == before {
		t.Error("the rack-b follower served none of it")
	}
}

// TestClusterJavaRackConsumerReadsFromItsRack: the Apache Kafka Java
// consumer (test/compat/java's RackConsumer) with client.rack=b reads a
// topic of RF 3 over racks a, b and c, and the rack-b broker serves
// (nearly) all its bytes. It runs when SAMSA_RACK_JAVA names the command
// that starts the probe (bootstrap, topic, rack, count and seconds are
// appended), as test/compat/java/run.sh sets it.
func TestClusterJavaRackConsumerReadsFromItsRack(t *testing.T) {
	command := strings.Fields(os.Getenv("SAMSA_RACK_JAVA"))
	if len(command) == 0 {
		t.Skip("SAMSA_RACK_JAVA is not set (make compat sets it)")
	}
	c := newRackCluster(t, rackValues, "a", "b", "c")
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, "near-java"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	const records = 600
	c.produceN("near-java", records, "r")
	c.waitReplicasEqual("near-java", 3)
	pctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(pctx, command[0], append(command[1:], strings.Join(c.bootstrap(), ","), "near-java", "b", strconv.Itoa(records), "60")...)
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != fmt.Sprintf("ok %d", records) {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("the Java consumer: %v, said %q; stderr:\n%s", err, out, stderr)
	}
	served := map[int32]float64{}
	var all float64
	for _, n := range c.nodes {
		served[n.id] = topicBytesOut(t, n, "near-java")
		all += served[n.id]
	}
	t.Logf("the Java consumer's bytes served by node: %v", served)
	if rackB := c.node(2); all == 0 || served[rackB.id] < 0.95*all {
		t.Errorf("rack b's broker served %.0f of %.0f consumer bytes (by node: %v); want nearly all", served[rackB.id], all, served)
	}
}
