package broker

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// series are the samples of one scrape, by name and labels as the text
// format prints them: `samsa_topic_bytes_in_total{topic="t"}`.
type series map[string]float64

// parseSeries reads Prometheus' text format.
func parseSeries(t testing.TB, text string) series {
	t.Helper()
	out := series{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("not a sample: %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the samples of a metric whose labels include every one given
// (`topic="t"`).
func (s series) sum(name string, labels ...string) float64 {
	var total float64
	for k, v := range s {
		n, l, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		match := true
		for _, want := range labels {
			if !strings.Contains(l, want) {
				match = false
			}
		}
		if match {
			total += v
		}
	}
	return total
}

// has reports whether the scrape holds a sample of the metric.
func (s series) has(name string) bool {
	for k := range s {
		if n, _, _ := strings.Cut(k, "{"); n == name {
			return true
		}
	}
	return false
}

// scrapeHTTP reads /metrics through the broker's HTTP listener.
func scrapeHTTP(t testing.TB, b *Broker) (series, string) {
	t.Helper()
	code, body := httpGet(t, b, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	return parseSeries(t, body), body
}

// scrapeRegistry reads the broker's metrics through the /metrics handler
// without a listener, for brokers built with it off.
func scrapeRegistry(t testing.TB, b *Broker) series {
	t.Helper()
	rec := httptest.NewRecorder()
	b.metricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d\n%s", rec.Code, rec.Body)
	}
	return parseSeries(t, rec.Body.String())
}

// consumeN reads n records of topic in group with a fresh consumer, which
// it closes.
func consumeN(t *testing.T, b *Broker, topic, group string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	// Closed before the next consumer of the group comes: a member left
	// in the group would be given partitions it never reads.
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
}

// After a franz-go producer and consumer, /metrics says what they did:
// the records in, the bytes in and out per topic, the requests per API
// with their times, the partitions and their logs, the connections.
func TestMetricsCountProduceAndConsume(t *testing.T) {
	b := startHTTPBroker(t)
	createTopic(t, b, "metered", 3)
	const records, valueSize = 300, 100
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("metered"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	var rs []*kgo.Record
	for i := range records {
		rs = append(rs, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: bytes.Repeat([]byte("v"), valueSize)})
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// A request is counted once its response is sent, as Kafka's
	// RequestChannel does: the client may read the answer first.
	s, _ := scrapeHTTP(t, b)
	for deadline := time.Now().Add(5 * time.Second); s.sum("samsa_requests_total", `api="Produce"`) < 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		s, _ = scrapeHTTP(t, b)
	}
	topic := `topic="metered"`
	if got := s.sum("samsa_topic_messages_in_total", topic); got != records {
		t.Errorf("messages in %v, want %d", got, records)
	}
	bytesIn := s.sum("samsa_topic_bytes_in_total", topic)
	if bytesIn < records*valueSize {
		t.Errorf("bytes in %v, below the %d bytes of values produced", bytesIn, records*valueSize)
	}
	if got := s.sum("samsa_log_end_offset", topic); got != records {
		t.Errorf("log end offsets add up to %v, want %d", got, records)
	}
	if got := s.sum("samsa_log_size_bytes", topic); got < bytesIn {
		t.Errorf("logs hold %v bytes, less than the %v appended", got, bytesIn)
	}
	if got := s.sum("samsa_log_segments", topic); got != 3 {
		t.Errorf("%v segments, want one per partition", got)
	}
	produces := s.sum("samsa_requests_total", `api="Produce"`)
	if produces < 1 || s.sum("samsa_topic_produce_requests_total", topic) < produces {
		t.Errorf("%v Produce requests, %v topic produce requests", produces, s.sum("samsa_topic_produce_requests_total", topic))
	}
	if got := s.sum("samsa_request_duration_seconds_count", `api="Produce"`); got != produces {
		t.Errorf("%v Produce requests timed, %v counted", got, produces)
	}
	if s.sum("samsa_requests_total", `api="Metadata"`) < 1 || s.sum("samsa_requests_total", `api="CreateTopics"`) != 1 {
		t.Errorf("%v Metadata and %v CreateTopics requests counted", s.sum("samsa_requests_total", `api="Metadata"`), s.sum("samsa_requests_total", `api="CreateTopics"`))
	}
	if s.has("samsa_requests_total{api=\"DescribeAcls\"") || s.sum("samsa_request_duration_seconds_count", `api="DescribeAcls"`) != 0 {
		t.Error("an API nobody called has series")
	}
	for name, want := range map[string]float64{
		"samsa_partitions": 3, "samsa_leader_partitions": 3, "samsa_under_replicated_partitions": 0,
		"samsa_under_min_isr_partitions": 0, "samsa_at_min_isr_partitions": 3, "samsa_controller_active": 1,
		"samsa_controller_topics": 1, "samsa_controller_partitions": 3, "samsa_controller_offline_partitions": 0,
		"samsa_topic_failed_produce_requests_total": 0,
	} {
		if got := s.sum(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if s.sum("samsa_connections", `listener="PLAINTEXT"`) < 1 || s.sum("samsa_connection_creations_total", `listener="PLAINTEXT"`) < 1 {
		t.Error("the producer's connections are not counted")
	}
	if s.sum("samsa_topic_bytes_out_total", topic) != 0 {
		t.Error("bytes out before any consumer")
	}

	consumeN(t, b, "metered", "metered-group", records)
	s, _ = scrapeHTTP(t, b)
	bytesOut := s.sum("samsa_topic_bytes_out_total", topic)
	if bytesOut < bytesIn {
		t.Errorf("bytes out %v after consuming everything, below the %v bytes in", bytesOut, bytesIn)
	}
	if s.sum("samsa_topic_fetch_requests_total", topic) < 1 || s.sum("samsa_requests_total", `api="Fetch"`) < 1 {
		t.Error("the consumer's fetches are not counted")
	}
	if s.sum("samsa_groups") < 1 {
		t.Error("the consumer group is not counted")
	}

	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("one more")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumeN(t, b, "metered", "metered-group", 1)
	s, _ = scrapeHTTP(t, b)
	if got := s.sum("samsa_topic_messages_in_total", topic); got != records+1 {
		t.Errorf("messages in %v, want %d", got, records+1)
	}
	if got := s.sum("samsa_topic_bytes_out_total", topic); got <= bytesOut {
		t.Errorf("bytes out did not grow with the next consume: %v, then %v", bytesOut, got)
	}
}

// A produce the broker refuses for a reason other than routine is a
// failed produce request of its topic, and adds no messages.
func TestMetricsCountFailedProduce(t *testing.T) {
	b := startHTTPBroker(t)
	hour := "3600000"
	createTopicWith(t, b, "strict", 1, map[string]*string{"message.timestamp.before.max.ms": &hour})
	cl := newClient(t, b.Addr(), kgo.DefaultProduceTopic("strict"), kgo.RecordRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("old"), Timestamp: time.Now().Add(-24 * time.Hour)}).FirstErr()
	if !errors.Is(err, kerr.InvalidTimestamp) {
		t.Fatalf("produce of a day-old record: %v, want INVALID_TIMESTAMP", err)
	}
	s, _ := scrapeHTTP(t, b)
	topic := `topic="strict"`
	for name, want := range map[string]float64{
		"samsa_topic_failed_produce_requests_total": 1, "samsa_topic_produce_requests_total": 1,
		"samsa_topic_messages_in_total": 0, "samsa_topic_bytes_in_total": 0,
	} {
		if got := s.sum(name, topic); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// Authentications are counted per listener and result.
func TestMetricsCountAuthentications(t *testing.T) {
	b := plainBroker(t, map[string]string{"connection.failed.authentication.delay.ms": "0"})
	addr := listenerAddr(t, b, "SASL_PLAINTEXT")
	good := saslClient(t, addr, plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism())
	bad := saslClient(t, addr, plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, good); err != nil {
		t.Fatal(err)
	}
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, bad); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: %v", err)
	}
	s := scrapeRegistry(t, b)
	sasl := `listener="SASL_PLAINTEXT"`
	if got := s.sum("samsa_authentications_total", sasl, `result="success"`); got < 1 {
		t.Errorf("%v successful authentications", got)
	}
	if got := s.sum("samsa_authentications_total", sasl, `result="failure"`); got < 1 {
		t.Errorf("%v failed authentications", got)
	}
	if got := s.sum("samsa_authentications_total", `listener="PLAINTEXT"`); got != 0 {
		t.Errorf("%v authentications on the PLAINTEXT listener, which has none", got)
	}
}

// The counters tests read through accessors (handler panics,
// authorization denials) are exported per API.
func TestMetricsExportEventCounters(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	b.counters.handlerPanics[kmsg.ListGroups].Add(2)
	b.counters.authzDenials[kmsg.Produce].Add(3)
	s := scrapeRegistry(t, b)
	if got := s.sum("samsa_request_handler_panics_total", `api="ListGroups"`); got != 2 {
		t.Errorf("handler panics %v, want 2", got)
	}
	if got := s.sum("samsa_authorization_denials_total", `api="Produce"`); got != 3 {
		t.Errorf("authorization denials %v, want 3", got)
	}
	if !s.has("samsa_build_info") || !s.has("go_goroutines") || !s.has("process_cpu_seconds_total") {
		t.Error("the build, Go runtime or process metrics are missing")
	}
}

// promtool, Prometheus' own linter, finds nothing to say about a scrape
// with every kind of series in it. It runs where promtool is installed
// (Debian's prometheus package); elsewhere the test is skipped.
func TestMetricsPassPromtool(t *testing.T) {
	if _, err := exec.LookPath("promtool"); err != nil {
		if os.Getenv("SAMSA_REQUIRE_PROMETHEUS") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus) and SAMSA_REQUIRE_PROMETHEUS is set")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	b := startHTTPBroker(t)
	createTopic(t, b, "linted", 2)
	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic("linted"))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumeN(t, b, "linted", "linted-group", 1)
	_, text := scrapeHTTP(t, b)
	lintMetrics(t, text)
}

// lintMetrics runs `promtool check metrics` on a scrape where promtool is
// installed: it must find nothing to say.
func lintMetrics(t *testing.T, text string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_PROMETHEUS") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus) and SAMSA_REQUIRE_PROMETHEUS is set")
		}
		t.Log("promtool is not installed: the scrape is not linted")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// In a cluster of three, the metrics of each node add up to the
// cluster's: one active controller, each partition led once, the
// followers' replicated bytes equal to what the leaders sent them, and
// no partition under-replicated once the followers caught up.
func TestClusterMetrics(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}, "metered"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("metered", 300, "r")
	c.waitReplicasEqual("metered", 3)
	var total series = series{}
	for _, n := range c.nodes {
		s, _ := scrapeHTTP(t, n.get())
		for _, name := range []string{"samsa_controller_active", "samsa_leader_partitions", "samsa_partitions",
			"samsa_under_replicated_partitions", "samsa_topic_messages_in_total", "samsa_replication_bytes_in_total",
			"samsa_replication_bytes_out_total", "samsa_controller_offline_partitions", "samsa_topic_bytes_in_total"} {
			total[name] += s.sum(name, `topic="metered"`)
			if !strings.HasPrefix(name, "samsa_topic_") {
				total[name] += s.sum(name) - s.sum(name, `topic="metered"`)
			}
		}
		if got := s.sum("samsa_controller_brokers", `state="active"`); got != 3 {
			t.Errorf("node %d's controller sees %v active brokers, want 3", n.id, got)
		}
	}
	for name, want := range map[string]float64{
		"samsa_controller_active": 1, "samsa_topic_messages_in_total": 300, "samsa_controller_offline_partitions": 0,
	} {
		if total[name] != want {
			t.Errorf("%s adds up to %v over the nodes, want %v", name, total[name], want)
		}
	}
	// __consumer_offsets and __transaction_state may exist too: every
	// partition a node hosts is led by exactly one node.
	if total["samsa_partitions"] != 3*total["samsa_leader_partitions"] || total["samsa_leader_partitions"] < 3 {
		t.Errorf("%v replicas hosted, %v partitions led", total["samsa_partitions"], total["samsa_leader_partitions"])
	}
	// Both followers of each partition hold every batch its leader took,
	// byte for byte; a leader may have sent a batch twice.
	in, out := total["samsa_replication_bytes_in_total"], total["samsa_replication_bytes_out_total"]
	if produced := total["samsa_topic_bytes_in_total"]; produced == 0 || in < 2*produced || out < in {
		t.Errorf("producers sent %v bytes, followers appended %v, leaders sent them %v", produced, in, out)
	}
}
