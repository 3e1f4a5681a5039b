package broker

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/samsa-io/samsa/internal/quota"
)

// produceRaw sends n acks=1 produces of one record to partition 0 of
// topic on r, each waited for.
func produceRaw(t *testing.T, r *rawConn, topic string, n int) {
	t.Helper()
	for i := range n {
		batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: fmt.Appendf(nil, "v%d", i)})
		if sp := rawProducePart(r, rawProduceReq(topic, 0, 1, batch), int32(i)); sp.ErrorCode != 0 {
			t.Fatalf("produce %d: %v", i, kerr.ErrorForCode(sp.ErrorCode))
		}
	}
}

// A request's time is split as Kafka's RequestMetrics split it: every
// request handled is queued once, every response written is sent once
// (an acks=0 produce has none), and the parts fit in the total. The Go
// scheduler's latencies are there too.
func TestMetricsTimeRequestParts(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	createTopic(t, b, "timed", 1)
	r := dialRaw(t, b)
	const produces = 20
	produceRaw(t, r, "timed", produces)
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: []byte("no answer")})
	r.sendFrame(encodeRequest(rawProduceReq("timed", 0, 0, batch), 100))
	// Answered after the acks=0 produce was handled and the produces
	// before it were sent, as a connection's requests go in order.
	r.roundTrip(kmsg.NewPtrMetadataRequest(), 101)

	s := scrapeRegistry(t, b)
	api := `api="Produce"`
	if got := s.sum("samsa_requests_total", api); got != produces+1 {
		t.Fatalf("%v Produce requests counted, want %d", got, produces+1)
	}
	if got := s.sum("samsa_request_queue_seconds_count", api); got != produces+1 {
		t.Errorf("%v Produce requests queued, want %d", got, produces+1)
	}
	if got := s.sum("samsa_response_send_seconds_count", api); got != produces {
		t.Errorf("%v Produce responses sent, want %d (the acks=0 one has none)", got, produces)
	}
	total := s.sum("samsa_request_duration_seconds_sum", api)
	handler := s.sum("samsa_request_handler_seconds_total", api)
	queue := s.sum("samsa_request_queue_seconds_sum", api)
	send := s.sum("samsa_response_send_seconds_sum", api)
	if handler <= 0 || queue <= 0 || send <= 0 || handler+queue+send > total {
		t.Errorf("Produce: %vs queued, %vs in the handler, %vs sending, of %vs in all", queue, handler, send, total)
	}
	if s.has("samsa_request_queue_seconds_count{api=\"DescribeAcls\"") {
		t.Error("an API nobody called has a queue time")
	}
	if n := s.sum("samsa_scheduler_latency_seconds_count"); n == 0 || s.sum("samsa_scheduler_latency_seconds_bucket", `le="+Inf"`) != n {
		t.Errorf("scheduler latencies: %v, +Inf bucket %v", n, s.sum("samsa_scheduler_latency_seconds_bucket", `le="+Inf"`))
	}
}

// A consumer's fetch that long-polls an empty partition waits in the fetch
// purgatory for its max wait, which its handler's busy time leaves out; a
// single node's acks=all produce, committed on append, never enters the
// produce purgatory.
func TestMetricsTimeFetchPurgatory(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	createTopic(t, b, "polled", 1)
	r := dialRaw(t, b)
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: []byte("v")})
	if sp := rawProducePart(r, rawProduceReq("polled", 0, -1, batch), 1); sp.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	const maxWait = 300 * time.Millisecond
	req := rawFetchReq(12, "polled", [16]byte{}, 0, 1)
	req.MaxWaitMillis, req.MinBytes = int32(maxWait.Milliseconds()), 1
	if rp := rawFetchPart(r, req, 2); rp.ErrorCode != 0 || len(rp.RecordBatches) != 0 {
		t.Fatalf("long poll past the end: %v, %d bytes", kerr.ErrorForCode(rp.ErrorCode), len(rp.RecordBatches))
	}
	r.roundTrip(kmsg.NewPtrMetadataRequest(), 3)

	s := scrapeRegistry(t, b)
	fetch := `operation="FetchConsumer"`
	if n, sum := s.sum("samsa_purgatory_wait_seconds_count", fetch), s.sum("samsa_purgatory_wait_seconds_sum", fetch); n != 1 || sum < 0.9*maxWait.Seconds() {
		t.Errorf("fetch purgatory: %v waits of %vs in all, want 1 of about %v", n, sum, maxWait)
	}
	if total, busy := s.sum("samsa_request_duration_seconds_sum", `api="Fetch"`), s.sum("samsa_request_handler_seconds_total", `api="Fetch"`); total < 0.9*maxWait.Seconds() || busy <= 0 || busy > total/3 {
		t.Errorf("Fetch: %vs in all, %vs busy in the handler; want the long poll in the first only", total, busy)
	}
	for _, op := range []string{`operation="Produce"`, `operation="FetchFollower"`} {
		if n := s.sum("samsa_purgatory_wait_seconds_count", op); n != 0 {
			t.Errorf("%s: %v waits on a single node", op, n)
		}
	}
	if got := s.sum("samsa_produces_waiting"); got != 0 || !s.has("samsa_produces_waiting") {
		t.Errorf("samsa_produces_waiting %v (present: %v), want 0", got, s.has("samsa_produces_waiting"))
	}
}

// In a cluster an acks=all produce waits for its followers, and the
// followers' fetches long-poll the leader; a produce that cannot commit
// (a follower of its ISR is dead) is in the produce purgatory until its
// timeout.
func TestClusterMetricsPurgatories(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"replica.lag.time.max.ms": "60000"})
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 1, 3, nil, "waited"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("waited", 50, "r")
	c.waitReplicasEqual("waited", 1)
	leaderNode := c.leaderOf("waited", 0)
	leader := leaderNode.get()
	s, _ := scrapeHTTP(t, leader)
	if n := s.sum("samsa_purgatory_wait_seconds_count", `operation="Produce"`); n < 1 {
		t.Errorf("%v acks=all produces waited for their followers on the leader", n)
	}
	if n := s.sum("samsa_purgatory_wait_seconds_count", `operation="FetchFollower"`); n < 1 {
		t.Errorf("%v follower fetches long-polled the leader", n)
	}

	for _, n := range c.nodes {
		if n != leaderNode {
			c.kill(n)
			break
		}
	}
	r := dialRaw(t, leader)
	req := rawProduceReq("waited", 0, -1, rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: []byte("stuck")}))
	req.TimeoutMillis = 2000
	answered := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { answered <- rawProducePart(r, req, 1) }()
	deadline := time.After(10 * time.Second)
	for {
		v, changed := leader.metrics.rt.producesWaiting.watch()
		if v == 1 {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the stuck produce never entered the purgatory")
		}
	}
	if s, _ := scrapeHTTP(t, leader); s.sum("samsa_produces_waiting") != 1 {
		t.Errorf("samsa_produces_waiting %v while a produce waits", s.sum("samsa_produces_waiting"))
	}
	if sp := <-answered; sp.ErrorCode != kerr.RequestTimedOut.Code {
		t.Errorf("the stuck produce: %v, want REQUEST_TIMED_OUT", kerr.ErrorForCode(sp.ErrorCode))
	}
	if s, _ := scrapeHTTP(t, leader); s.sum("samsa_produces_waiting") != 0 {
		t.Errorf("samsa_produces_waiting %v once answered", s.sum("samsa_produces_waiting"))
	}
}

// rebucket counts a runtime bucket under the first bound at or above its
// upper edge, estimates the sum at the buckets' middles, and gives every
// bound a bucket.
func TestRebucket(t *testing.T) {
	inf := math.Inf(1)
	h := &metrics.Float64Histogram{
		Buckets: []float64{math.Inf(-1), 0, 1e-6, 2e-6, 1e-3, 2e-3, inf},
		Counts:  []uint64{1, 2, 0, 3, 4, 5},
	}
	count, sum, buckets := rebucket(h, []float64{1e-6, 1e-3, 1})
	want := map[float64]uint64{1e-6: 3, 1e-3: 6, 1: 10}
	if count != 15 || !maps.Equal(buckets, want) {
		t.Errorf("count %d, buckets %v; want 15, %v", count, buckets, want)
	}
	if wantSum := 2*0.5e-6 + 3*(2e-6+1e-3)/2 + 4*1.5e-3 + 5*2e-3; math.Abs(sum-wantSum) > 1e-12 {
		t.Errorf("sum %v, want %v", sum, wantSum)
	}
}

// Each flush of a log is timed: a topic with flush.messages=1 flushes at
// every produce.
func TestMetricsTimeLogFlushes(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	one := "1"
	createTopicWith(t, b, "flushed", 1, map[string]*string{"flush.messages": &one})
	before := scrapeRegistry(t, b).sum("samsa_log_flush_seconds_count")
	const produces = 5
	produceRaw(t, dialRaw(t, b), "flushed", produces)
	s := scrapeRegistry(t, b)
	if got := s.sum("samsa_log_flush_seconds_count") - before; got < produces {
		t.Errorf("%v flushes timed over %d produces with flush.messages=1", got, produces)
	}
	if s.sum("samsa_log_flush_seconds_bucket", `le="+Inf"`) != s.sum("samsa_log_flush_seconds_count") || s.sum("samsa_log_flush_seconds_sum") <= 0 {
		t.Errorf("flush histogram: +Inf bucket %v, count %v, sum %v", s.sum("samsa_log_flush_seconds_bucket", `le="+Inf"`),
			s.sum("samsa_log_flush_seconds_count"), s.sum("samsa_log_flush_seconds_sum"))
	}
}

// The cleaner's progress: a compacted topic's rounds of updates are
// cleaned, and the pass's bytes, records and time show.
func TestMetricsCountCompaction(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: compactionValues(t, nil)})
	createTopicWith(t, b, "cleaned", 1, topicConfigs("cleanup.policy", "compact"))
	w := newKeyedWriter(t, b, "cleaned")
	keys := keyNames("key", 0, 20)
	old := time.Now().Add(-time.Hour).UnixMilli()
	for r := range 5 {
		w.round(old+int64(r)*10, updates(keys, fmt.Sprint(r))...)
	}
	w.round(time.Now().UnixMilli(), kv("fence", []byte("f")))
	deadline := time.After(compactionWait)
	var s series
	for {
		round := b.logs.CleanerRound()
		s = scrapeRegistry(t, b)
		if s.sum("samsa_log_cleaner_records_removed_total") > 0 {
			break
		}
		select {
		case <-round:
		case <-deadline:
			t.Fatal("no record removed by the cleaner")
		}
	}
	if got := s.sum("samsa_log_cleaner_passes_total", `result="success"`); got < 1 {
		t.Errorf("%v passes", got)
	}
	read, written := s.sum("samsa_log_cleaner_read_bytes_total"), s.sum("samsa_log_cleaner_written_bytes_total")
	if read <= written || written <= 0 {
		t.Errorf("the cleaner read %v bytes and wrote %v", read, written)
	}
	if s.sum("samsa_log_cleaner_seconds_total") <= 0 || s.sum("samsa_log_cleaner_last_pass_buffer_utilization_ratio") <= 0 {
		t.Errorf("pass time %v, buffer utilization %v", s.sum("samsa_log_cleaner_seconds_total"), s.sum("samsa_log_cleaner_last_pass_buffer_utilization_ratio"))
	}
	if ts := s.sum("samsa_log_cleaner_last_round_timestamp_seconds"); time.Since(time.Unix(int64(ts), 0)) > time.Minute {
		t.Errorf("last round at %v", ts)
	}
	if got := s.sum("samsa_log_cleaner_passes_total", `result="failure"`) + s.sum("samsa_log_cleaner_uncleanable_partitions"); got != 0 {
		t.Errorf("%v failures", got)
	}
}

// awaitMetric scrapes b until the samples of name with labels add up to at
// least want.
func awaitMetric(t *testing.T, b *Broker, want float64, name string, labels ...string) series {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := scrapeRegistry(t, b)
		if s.sum(name, labels...) >= want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %v: %v, want %v", name, labels, s.sum(name, labels...), want)
		}
		time.Sleep(20 * time.Millisecond) // a background task counts: nothing to wait on
	}
}

// The leader counts the ISR changes it makes: a follower that dies leaves
// the ISR (a shrink), and comes back once restarted and caught up (an
// expansion); a proposal the controller refuses is a failed ISR update.
func TestClusterMetricsISRChanges(t *testing.T) {
	// The lag time well below the session timeout (3 s): the leader drops
	// the dead follower before the controller fences it.
	c := newTestCluster(t, 3, map[string]string{"replica.lag.time.max.ms": "500"})
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 1, 3, nil, "isr"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("isr", 20, "r")
	c.waitReplicasEqual("isr", 1)
	leaderNode := c.leaderOf("isr", 0)
	leader := leaderNode.get()
	s := scrapeRegistry(t, leader)
	shrinks, expands := s.sum("samsa_isr_shrinks_total"), s.sum("samsa_isr_expands_total")
	var follower *clusterNode
	for _, n := range c.nodes {
		if n != leaderNode {
			follower = n
			break
		}
	}
	c.kill(follower)
	awaitMetric(t, leader, shrinks+1, "samsa_isr_shrinks_total")
	c.start(follower)
	c.waitLive(3)
	awaitMetric(t, leader, expands+1, "samsa_isr_expands_total")

	ts, _ := leader.topics.byTopicName("isr")
	p, code := ts.partition(0)
	if code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	leader.proposeISR(p, p.LeaderEpoch(), -1, p.ISR()) // a partition epoch the controller refuses
	awaitMetric(t, leader, 1, "samsa_isr_update_failures_total")
}

// The group coordinator's counts: a classic group's rebalance and its
// commits, a consumer group's (KIP-848) epoch bumps, an OffsetDelete.
func TestMetricsCountGroupRebalancesAndOffsets(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	createTopic(t, b, "grouped", 2)
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("grouped"))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumeN(t, b, "grouped", "classic", 2)
	s := scrapeRegistry(t, b)
	if got, other := s.sum("samsa_group_rebalances_total", `type="classic"`), s.sum("samsa_group_rebalances_total", `type="consumer"`); got < 1 || other != 0 {
		t.Errorf("%v classic rebalances, %v consumer group ones", got, other)
	}
	commits := s.sum("samsa_group_offset_commits_total")
	if commits < 1 {
		t.Errorf("%v offsets committed", commits)
	}

	cl := newFranz(t, b.Addr(), kgo.ConsumerGroup("kip848"), kgo.ConsumeTopics("grouped"), kgo.ServerSideBalancer(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < 2; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	s = scrapeRegistry(t, b)
	if got := s.sum("samsa_group_rebalances_total", `type="consumer"`); got < 1 {
		t.Errorf("%v consumer group rebalances", got)
	}

	// A group with no members (an admin tool's commits): OffsetDelete
	// takes its offsets.
	adm := kadm.NewClient(prod)
	offsets := kadm.Offsets{}
	offsets.AddOffset("grouped", 0, 1, -1)
	offsets.AddOffset("grouped", 1, 1, -1)
	if err := adm.CommitAllOffsets(ctx, "admin", offsets); err != nil {
		t.Fatal(err)
	}
	deleted, err := adm.DeleteOffsets(ctx, "admin", kadm.TopicsSet{"grouped": {0: {}, 1: {}}})
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	s = scrapeRegistry(t, b)
	if got := s.sum("samsa_group_offset_deletions_total"); got != 2 {
		t.Errorf("%v offsets deleted, want 2", got)
	}
	if got := s.sum("samsa_group_offset_commits_total"); got < commits+2 {
		t.Errorf("%v offsets committed, want at least %v", got, commits+2)
	}
	if !s.has("samsa_group_offset_expirations_total") || s.sum("samsa_group_offset_expirations_total") != float64(b.groups.Stats().OffsetExpirations) {
		t.Errorf("offset expirations: %v, the coordinator counted %d", s.sum("samsa_group_offset_expirations_total"), b.groups.Stats().OffsetExpirations)
	}
}

// Transactions by state: one committed, one left open.
func TestMetricsCountTransactionsByState(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	createTopic(t, b, "txns", 1)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	s := scrapeRegistry(t, b)
	if !s.has("samsa_transactions") || s.sum("samsa_transactions") != 0 {
		t.Fatalf("before any transaction: %v transactions (present: %v)", s.sum("samsa_transactions"), s.has("samsa_transactions"))
	}
	for _, id := range []string{"committed", "open"} {
		cl := newClient(t, b.Addr(), kgo.TransactionalID(id), kgo.DefaultProduceTopic("txns"))
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(id)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if id == "committed" {
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The commit is answered once decided (PrepareCommit); its markers
	// are written after.
	s = awaitSeries(t, b, "the committed transaction complete", func(s series) bool {
		return s.sum("samsa_transactions", `state="CompleteCommit"`) == 1
	})
	for state, want := range map[string]float64{"Ongoing": 1, "CompleteCommit": 1, "Empty": 0, "PrepareCommit": 0, "CompleteAbort": 0} {
		if got := s.sum("samsa_transactions", `state="`+state+`"`); got != want {
			t.Errorf("%s: %v transactions, want %v", state, got, want)
		}
	}
}

// Each kind of client quota counts the requests it throttled and the time
// it asked, and each throttled request counts under its API.
func TestMetricsCountThrottles(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "throttled", 1)
	setQuotas(t, b, map[quota.Entity]map[string]float64{
		{ClientID: quota.Named("producer")}: {quota.Produce.Key(): 100_000},
		{ClientID: quota.Named("consumer")}: {quota.Fetch.Key(): 1000},
		{ClientID: quota.Named("admin")}:    {quota.ControllerMutation.Key(): 1},
		{ClientID: quota.Named("chatty")}:   {quota.Request.Key(): 0.00001},
	})
	throttled := func(c *throttleConn, req kmsg.Request) bool {
		c.send(req)
		ms, _ := c.receive(req).(interface{ Throttle() (int32, bool) }).Throttle()
		return ms > 0
	}
	// 150 KB twice in one window: over the two windows' worth a producer
	// may use at once.
	prod := dialAs(t, b.Addr(), "producer")
	if throttled(prod, produceRequest(t, 9, "throttled", 150_000)) || !throttled(prod, produceRequest(t, 9, "throttled", 150_000)) {
		t.Fatal("the second produce of 150 KB against 100 KB/s is not the one throttled")
	}
	// A fetch of those 300 KB at 1 KB/s: answered empty, throttled.
	if !throttled(dialAs(t, b.Addr(), "consumer"), rawFetchReq(12, "throttled", [16]byte{}, 0, 0)) {
		t.Fatal("a fetch of 300 KB against 1 KB/s is not throttled")
	}
	// 13 partitions from a bucket of 11, then two topics refused in debt:
	// one request throttled.
	if !throttled(dialAs(t, b.Addr(), "admin"), createTopicsRequest(7, map[string]int32{"m1": 13, "m2": 1, "m3": 1}, "m1", "m2", "m3")) {
		t.Fatal("CreateTopics into debt is not throttled")
	}
	chatty := dialAs(t, b.Addr(), "chatty")
	metadata := kmsg.NewPtrMetadataRequest()
	metadata.Version = 12
	for i := 0; !throttled(chatty, metadata); i++ {
		if i == 20 {
			t.Fatal("20 Metadata requests against 0.00001% of a thread were never throttled")
		}
	}

	s := scrapeRegistry(t, b)
	for _, q := range []string{"produce", "fetch", "controller_mutation", "request"} {
		label := `quota="` + q + `"`
		if n, secs := s.sum("samsa_quota_throttles_total", label), s.sum("samsa_quota_throttle_seconds_total", label); n < 1 || secs <= 0 {
			t.Errorf("%s quota: %v throttles of %vs in all", q, n, secs)
		}
	}
	for _, q := range []string{"produce", "controller_mutation"} {
		if n := s.sum("samsa_quota_throttles_total", `quota="`+q+`"`); n != 1 {
			t.Errorf("%v requests throttled by the %s quota, want 1", n, q)
		}
	}
	for api, want := range map[string]float64{"Produce": 1, "Fetch": 1, "CreateTopics": 1, "Metadata": 1} {
		if got := s.sum("samsa_throttled_requests_total", `api="`+api+`"`); got != want {
			t.Errorf("%v %s requests throttled, want %v", got, api, want)
		}
	}
}

// awaitSeries scrapes b until ok holds.
func awaitSeries(t *testing.T, b *Broker, what string, ok func(series) bool) series {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := scrapeRegistry(t, b)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond) // a connection's end is the broker's own event: nothing to wait on
	}
}

// Connections are counted by the principal they authenticated as and by
// the client software they named, from their start to their end.
func TestMetricsCountConnectionsByPrincipalAndClient(t *testing.T) {
	b := plainBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	alice := saslClient(t, listenerAddr(t, b, "SASL_PLAINTEXT"), plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism(),
		kgo.SoftwareNameAndVersion("metered-client", "1.2.3"))
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, alice); err != nil {
		t.Fatal(err)
	}
	// A raw connection that says nothing: ANONYMOUS, unknown software.
	raw, err := net.Dial("tcp", listenerAddr(t, b, "PLAINTEXT"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// One that names itself in ApiVersions v3, the highest Samsa serves.
	tool := dialRaw(t, b)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, "raw-tool", "0.1"
	if resp := tool.roundTrip(av, 1).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(resp.ErrorCode))
	}
	anonymous, unknown := `principal="User:ANONYMOUS"`, `client_software_name="unknown"`
	// Every connection open counted once by principal and once by client,
	// when no connection is between its accept and its count.
	s := awaitSeries(t, b, "the raw connection counted", func(s series) bool {
		all := s.sum("samsa_connections")
		return s.sum("samsa_principal_connections", anonymous) >= 1 && s.sum("samsa_client_connections", unknown, `listener="PLAINTEXT"`) >= 1 &&
			s.sum("samsa_principal_connections") == all && s.sum("samsa_client_connections") == all
	})
	if got := s.sum("samsa_principal_connections", `principal="User:alice"`); got < 1 {
		t.Errorf("%v connections of User:alice", got)
	}
	if got := s.sum("samsa_client_connections", `listener="SASL_PLAINTEXT"`, `client_software_name="metered-client"`, `client_software_version="1.2.3"`); got < 1 {
		t.Errorf("%v connections of metered-client 1.2.3", got)
	}
	if got := s.sum("samsa_client_connections", `listener="PLAINTEXT"`, `client_software_name="raw-tool"`, `client_software_version="0.1"`); got != 1 {
		t.Errorf("%v connections of raw-tool 0.1", got)
	}

	raw.Close()
	tool.nc.Close()
	alice.Close()
	awaitSeries(t, b, "the closed connections forgotten", func(s series) bool {
		return !s.has("samsa_principal_connections") && !s.has("samsa_client_connections")
	})
}

// Past the limit, the keys with the fewest connections are summed under
// other; ties go by key.
func TestTopCounts(t *testing.T) {
	got := topCounts(map[string]int{"a": 1, "b": 5, "c": 2, "d": 2, "e": 1}, 3, "other")
	want := []counted[string]{{"b", 5}, {"c", 2}, {"d", 2}, {"other", 2}}
	if !slices.Equal(got, want) {
		t.Errorf("top 3: %v, want %v", got, want)
	}
	if got := topCounts(map[string]int{"a": 1}, 3, "other"); !slices.Equal(got, []counted[string]{{"a", 1}}) {
		t.Errorf("under the limit: %v", got)
	}
}

// The files the logs hold are counted, one a segment, against their most.
func TestMetricsCountLogFiles(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	before := scrapeRegistry(t, b)
	createTopicWith(t, b, "counted", 3, nil)
	s := scrapeRegistry(t, b)
	if got := s.sum("samsa_log_open_files") - before.sum("samsa_log_open_files"); got != 3 {
		t.Errorf("a topic of 3 partitions added %v open files, want 3 (a segment each)", got)
	}
	if limit := s.sum("samsa_log_open_files_max"); limit <= s.sum("samsa_log_open_files") {
		t.Errorf("samsa_log_open_files_max %v, not above samsa_log_open_files %v", limit, s.sum("samsa_log_open_files"))
	}
}
