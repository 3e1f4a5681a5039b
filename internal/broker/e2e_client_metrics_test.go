package broker

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/telemetry"
)

// KIP-714 end to end: client metrics subscriptions as config resources
// through franz-go, the telemetry APIs as raw kmsg requests, and the pushed
// metrics on /metrics.

// telemetryClient is a franz-go client that does not push metrics of its
// own, for raw requests, named clientID.
func telemetryClient(t *testing.T, b *Broker, clientID string) (*kgo.Client, context.Context) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ClientID(clientID), kgo.DisableClientMetrics(),
		kgo.SoftwareNameAndVersion("samsa-test", "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return cl, ctx
}

// alterSubscription changes one client metrics subscription with
// IncrementalAlterConfigs: name=value pairs SET, a bare name DELETEd.
func alterSubscription(t *testing.T, ctx context.Context, cl *kgo.Client, name string, ops ...string) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		k, v, set := strings.Cut(o, "=")
		c.Name = k
		if set {
			c.Value = kmsg.StringPtr(v)
		} else {
			c.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	rr := resp.Resources[0]
	msg := ""
	if rr.ErrorMessage != nil {
		msg = *rr.ErrorMessage
	}
	return rr.ErrorCode, msg
}

// describeSubscription describes a subscription: name=value (source) per
// config, or the error.
func describeSubscription(t *testing.T, ctx context.Context, cl *kgo.Client, name string) []string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeClientMetrics, name
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	rr := resp.Resources[0]
	if rr.ErrorCode != 0 {
		return []string{kerr.ErrorForCode(rr.ErrorCode).Error()}
	}
	var out []string
	for _, c := range rr.Configs {
		out = append(out, c.Name+"="+*c.Value+" ("+c.Source.String()+")")
	}
	return out
}

func listSubscriptions(t *testing.T, ctx context.Context, cl *kgo.Client) []string {
	t.Helper()
	listed, err := kadm.NewClient(cl).ListConfigResources(ctx, kadm.ConfigResourceClientMetrics)
	if err != nil {
		t.Fatal(err)
	}
	return listed.Names()
}

// Subscriptions are set, described, refused as Kafka refuses them, listed,
// kept across a restart (they are in the metadata log) and deleted with
// their last config.
func TestClientMetricsSubscriptionsE2E(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	cl, ctx := telemetryClient(t, b, "admin")
	if code, msg := alterSubscription(t, ctx, cl, "producers", "metrics=org.apache.kafka.producer.", "interval.ms=1000",
		"match=client_software_name=apache-kafka-java"); code != 0 {
		t.Fatalf("set: %s %s", kerr.ErrorForCode(code), msg)
	}
	want := []string{
		"interval.ms=1000 (CLIENT_METRICS_CONFIG)",
		"match=client_software_name=apache-kafka-java (CLIENT_METRICS_CONFIG)",
		"metrics=org.apache.kafka.producer. (CLIENT_METRICS_CONFIG)",
	}
	if got := describeSubscription(t, ctx, cl, "producers"); !slices.Equal(got, want) {
		t.Fatalf("describe:\n got %q\nwant %q", got, want)
	}
	// A subscription that does not exist describes as its defaults.
	if got := describeSubscription(t, ctx, cl, "nobody"); !slices.Equal(got, []string{
		"interval.ms=300000 (DEFAULT_CONFIG)", "match= (DEFAULT_CONFIG)", "metrics= (DEFAULT_CONFIG)"}) {
		t.Fatalf("describe of a subscription that does not exist: %q", got)
	}
	if got := describeSubscription(t, ctx, cl, ""); len(got) != 1 || !strings.HasPrefix(got[0], "INVALID_REQUEST") {
		t.Fatalf("describe without a name: %q", got)
	}
	for _, f := range []struct {
		ops  []string
		code int16
		says string
	}{
		{[]string{"interval.ms=99"}, kerr.InvalidRequest.Code, "between 100 and 3600000"},
		{[]string{"interval.ms=3600001"}, kerr.InvalidRequest.Code, "between 100 and 3600000"},
		{[]string{"intervalms=1000"}, kerr.InvalidRequest.Code, "unknown client metrics configuration"},
		{[]string{"match=client_id=("}, kerr.InvalidConfig.Code, "not a valid regular expression"},
		{[]string{"match=hostname=x"}, kerr.InvalidConfig.Code, "illegal client matching pattern"},
		{[]string{"metrics=a.,a."}, kerr.InvalidConfig.Code, "must not be duplicated"},
	} {
		code, msg := alterSubscription(t, ctx, cl, "producers", f.ops...)
		if code != f.code || !strings.Contains(msg, f.says) {
			t.Errorf("%v: %s %q, want %s saying %q", f.ops, kerr.ErrorForCode(code), msg, kerr.ErrorForCode(f.code), f.says)
		}
	}
	if code, _ := alterSubscription(t, ctx, cl, "consumers", "metrics=*"); code != 0 {
		t.Fatalf("second subscription: %s", kerr.ErrorForCode(code))
	}
	if got := listSubscriptions(t, ctx, cl); !slices.Equal(got, []string{"consumers", "producers"}) {
		t.Fatalf("listed %q", got)
	}

	b = restartBroker(t, b, dir)
	cl, ctx = telemetryClient(t, b, "admin")
	if got := describeSubscription(t, ctx, cl, "producers"); !slices.Equal(got, want) {
		t.Fatalf("after a restart:\n got %q\nwant %q", got, want)
	}
	if code, _ := alterSubscription(t, ctx, cl, "producers", "metrics", "interval.ms", "match"); code != 0 {
		t.Fatalf("delete: %s", kerr.ErrorForCode(code))
	}
	if got := listSubscriptions(t, ctx, cl); !slices.Equal(got, []string{"consumers"}) {
		t.Fatalf("after deleting every config of producers, listed %q", got)
	}
}

// otlpPayload is one gauge and one delta counter, as a Java producer
// pushes them, zstd-compressed.
func otlpPayload(t *testing.T, gauge float64, sent int64) []byte {
	t.Helper()
	point := func(v *metricspb.NumberDataPoint, kv ...string) *metricspb.NumberDataPoint {
		for i := 0; i < len(kv); i += 2 {
			v.Attributes = append(v.Attributes, &commonpb.KeyValue{Key: kv[i], Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: kv[i+1]}}})
		}
		return v
	}
	raw, err := proto.Marshal(&metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{
		Metrics: []*metricspb.Metric{
			{Name: "org.apache.kafka.producer.record.queue.time.avg", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
				DataPoints: []*metricspb.NumberDataPoint{point(&metricspb.NumberDataPoint{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: gauge}})}}}},
			{Name: "org.apache.kafka.producer.topic.record.send.total", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
				IsMonotonic: true, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
				DataPoints: []*metricspb.NumberDataPoint{point(&metricspb.NumberDataPoint{Value: &metricspb.NumberDataPoint_AsInt{AsInt: sent}}, "topic", "orders")}}}},
		},
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := record.Compress(record.CodecZstd, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// GetTelemetrySubscriptions and PushTelemetry as raw requests: the
// subscription a client matches, pushes that show on /metrics (a delta
// counter added up), Kafka's errors, and a terminating push that takes
// the client's series away.
func TestClientTelemetryE2E(t *testing.T) {
	b := startHTTPBroker(t)
	cl, ctx := telemetryClient(t, b, "orders-producer")
	if code, msg := alterSubscription(t, ctx, cl, "producers", "metrics=org.apache.kafka.producer.", "interval.ms=100",
		"match=client_id=orders-.*,client_software_name=samsa-test"); code != 0 {
		t.Fatalf("subscription: %s %s", kerr.ErrorForCode(code), msg)
	}
	get := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	sub, err := get.RequestWith(ctx, cl)
	if err != nil || sub.ErrorCode != 0 {
		t.Fatalf("get: %v %v", err, sub)
	}
	if sub.ClientInstanceID == [16]byte{} || sub.PushIntervalMillis != 100 || !slices.Equal(sub.RequestedMetrics, []string{"org.apache.kafka.producer."}) ||
		!sub.DeltaTemporality || sub.TelemetryMaxBytes != 1048576 || !slices.Equal(sub.AcceptedCompressionTypes, []int8{4, 3, 1, 2}) {
		t.Fatalf("subscription %+v", sub)
	}
	push := func(p *kmsg.PushTelemetryRequest) int16 {
		t.Helper()
		p.ClientInstanceID = sub.ClientInstanceID
		if p.SubscriptionID == 0 {
			p.SubscriptionID = sub.SubscriptionID
		}
		resp, err := p.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}
	pushMetrics := func(gauge float64, sent int64) int16 {
		p := kmsg.NewPtrPushTelemetryRequest()
		p.CompressionType, p.Metrics = 4, otlpPayload(t, gauge, sent)
		return push(p)
	}
	if code := pushMetrics(2.5, 10); code != 0 {
		t.Fatalf("first push: %s", kerr.ErrorForCode(code))
	}
	if code := pushMetrics(3, 1); code != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("a push within the interval: %s", kerr.ErrorForCode(code))
	}
	time.Sleep(150 * time.Millisecond) // the push interval, 100 ms, must pass: nothing else says it has
	if code := pushMetrics(4, 5); code != 0 {
		t.Fatalf("second push: %s", kerr.ErrorForCode(code))
	}
	id := `client_instance_id="` + instanceIDString(sub.ClientInstanceID) + `"`
	s, _ := scrapeHTTP(t, b)
	if got := s.sum("samsa_client_org_apache_kafka_producer_record_queue_time_avg", id, `client_id="orders-producer"`,
		`client_software_name="samsa-test"`, `client_software_version="1.0.0"`); got != 4 {
		t.Errorf("gauge: %v, want the last value 4", got)
	}
	if got := s.sum("samsa_client_org_apache_kafka_producer_topic_record_send_total", id, `topic="orders"`); got != 15 {
		t.Errorf("delta counter: %v, want 10+5", got)
	}
	if got := s.sum("samsa_telemetry_pushes_total", `result="ok"`); got != 2 {
		t.Errorf("pushes ok: %v", got)
	}

	// Kafka's errors.
	time.Sleep(150 * time.Millisecond)
	stale := kmsg.NewPtrPushTelemetryRequest()
	stale.SubscriptionID = sub.SubscriptionID + 1
	if code := push(stale); code != kerr.UnknownSubscriptionID.Code {
		t.Errorf("stale subscription id: %s", kerr.ErrorForCode(code))
	}
	time.Sleep(150 * time.Millisecond)
	big := kmsg.NewPtrPushTelemetryRequest()
	big.Metrics = make([]byte, 1048577)
	if code := push(big); code != kerr.TelemetryTooLarge.Code {
		t.Errorf("over telemetry.max.bytes: %s", kerr.ErrorForCode(code))
	}
	time.Sleep(150 * time.Millisecond)
	garbage := kmsg.NewPtrPushTelemetryRequest()
	garbage.CompressionType, garbage.Metrics = 3, []byte("not lz4 at all")
	if code := push(garbage); code != kerr.InvalidRecord.Code {
		t.Errorf("garbage: %s", kerr.ErrorForCode(code))
	}
	zero := kmsg.NewPtrPushTelemetryRequest()
	if resp, err := zero.RequestWith(ctx, cl); err != nil || resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("zero instance id: %v %v", resp, err)
	}

	// The subscription changes: the client's next get says so at once,
	// with another subscription ID, and its old one is refused.
	if code, _ := alterSubscription(t, ctx, cl, "producers", "metrics=*"); code != 0 {
		t.Fatal("alter")
	}
	get.ClientInstanceID = sub.ClientInstanceID
	again, err := get.RequestWith(ctx, cl)
	if err != nil || again.ErrorCode != 0 || again.SubscriptionID == sub.SubscriptionID || !slices.Equal(again.RequestedMetrics, []string{"*"}) {
		t.Fatalf("after the change: %v %+v", err, again)
	}
	oldID := kmsg.NewPtrPushTelemetryRequest()
	if code := push(oldID); code != kerr.UnknownSubscriptionID.Code {
		t.Errorf("old subscription id after the change: %s", kerr.ErrorForCode(code))
	}
	sub.SubscriptionID = again.SubscriptionID

	// Terminating: accepted at once, the series go, nothing after.
	last := kmsg.NewPtrPushTelemetryRequest()
	last.Terminating = true
	if code := push(last); code != 0 {
		t.Fatalf("terminating push: %s", kerr.ErrorForCode(code))
	}
	if s, _ := scrapeHTTP(t, b); s.has("samsa_client_org_apache_kafka_producer_record_queue_time_avg") {
		t.Error("a terminated client's series are still on /metrics")
	}
	time.Sleep(150 * time.Millisecond)
	if code := push(kmsg.NewPtrPushTelemetryRequest()); code != kerr.InvalidRequest.Code {
		t.Errorf("a push after terminating: %s", kerr.ErrorForCode(code))
	}
}

func instanceIDString(id [16]byte) string { return telemetry.InstanceID(id).String() }

// Without the HTTP listener there is no receiver: the telemetry APIs are
// not advertised, as Kafka hides them without a telemetry receiver, and a
// client that sends one anyway is closed as for any unknown API.
func TestClientTelemetryNeedsTheHTTPListener(t *testing.T) {
	for _, b := range []*Broker{startBroker(t), startHTTPBroker(t)} {
		cl, ctx := telemetryClient(t, b, "c")
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		advertised := slices.ContainsFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
			return k.ApiKey == kmsg.GetTelemetrySubscriptions.Int16()
		})
		if on := b.HTTPAddr() != ""; advertised != on {
			t.Errorf("HTTP listener %v: GetTelemetrySubscriptions advertised %v", on, advertised)
		}
	}
	r := dialRaw(t, startBroker(t))
	r.sendFrame(encodeRequest(kmsg.NewPtrGetTelemetrySubscriptionsRequest(), 3))
	if _, _, err := r.readFrame(); err == nil {
		t.Error("GetTelemetrySubscriptions answered without a receiver")
	}
}

// franz-go pushes KIP-714 metrics of its own when a subscription asks for
// them: a real client's pushes reach /metrics. (By prefix: franz-go reads
// a lone "" as every metric where Kafka's brokers send, and Java clients
// read, "*"; given "*" it pushes nothing, against Kafka as here.)
func TestClientTelemetryFromFranzGo(t *testing.T) {
	b := startHTTPBroker(t)
	admin, ctx := telemetryClient(t, b, "admin")
	if code, msg := alterSubscription(t, ctx, admin, "kafka", "metrics=org.apache.kafka.", "interval.ms=100"); code != 0 {
		t.Fatalf("subscription: %s %s", kerr.ErrorForCode(code), msg)
	}
	topic := "telemetry-franz"
	createTopic(t, b, topic, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ClientID("franz-pusher"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		_, body := scrapeHTTP(t, b)
		// franz-go's first pushes hold its connection counts; its
		// software name came with ApiVersions.
		if l := grepLines(body, "samsa_client_org_apache_kafka_producer_"); strings.Contains(l, `client_id="franz-pusher"`) &&
			strings.Contains(l, `client_software_name="kgo"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no series of franz-pusher on /metrics after 30 s:\n%s", grepLines(body, "samsa_client_"))
		}
		time.Sleep(200 * time.Millisecond) // franz-go pushes on its own clock; the scrape is the event
	}
}

// grepLines keeps the lines of text that contain sub.
func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestClientTelemetryFromJava: the Apache Kafka Java client (4.4, make
// compat's; test/compat/java's TelemetryProbe) pushes its metrics when a
// subscription asks for them, and they show on /metrics under its client
// ID, instance ID and software name. It runs when SAMSA_TELEMETRY_JAVA
// names the command that starts the probe (the broker's address, client
// ID, topic and seconds are appended), as make compat sets it.
func TestClientTelemetryFromJava(t *testing.T) {
	command := strings.Fields(os.Getenv("SAMSA_TELEMETRY_JAVA"))
	if len(command) == 0 {
		t.Skip("SAMSA_TELEMETRY_JAVA is not set (make compat sets it)")
	}
	b := startHTTPBroker(t)
	admin, ctx := telemetryClient(t, b, "admin")
	if code, msg := alterSubscription(t, ctx, admin, "java-producers", "metrics=org.apache.kafka.producer.", "interval.ms=1000",
		"match=client_software_name=apache-kafka-java"); code != 0 {
		t.Fatalf("subscription: %s %s", kerr.ErrorForCode(code), msg)
	}
	const topic, clientID = "telemetry-java", "telemetry-java-producer"
	createTopic(t, b, topic, 1)
	cmd := exec.CommandContext(ctx, command[0], append(command[1:], b.Addr(), clientID, topic, "50")...)
	stderr, err := os.Create(filepath.Join(t.TempDir(), "probe.err"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	idLine := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		idLine <- strings.TrimSpace(line)
	}()
	var instanceID string
	select {
	case line := <-idLine:
		var ok bool
		if instanceID, ok = strings.CutPrefix(line, "client_instance_id "); !ok {
			t.Fatalf("the probe said %q; stderr in %s:\n%s", line, stderr.Name(), tail(t, stderr.Name()))
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the probe told no client instance ID in 60 s:\n%s", tail(t, stderr.Name()))
	}
	labels := []string{`client_id="` + clientID + `"`, `client_instance_id="` + instanceID + `"`, `client_software_name="apache-kafka-java"`}
	deadline := time.Now().Add(40 * time.Second)
	for {
		s, body := scrapeHTTP(t, b)
		var families []string
		for k := range s {
			name, l, _ := strings.Cut(k, "{")
			if strings.HasPrefix(name, "samsa_client_org_apache_kafka_producer_") && containsAll(l, labels) && !slices.Contains(families, name) {
				families = append(families, name)
			}
		}
		// The sends are counted: a counter the client pushed as deltas
		// and the broker added up.
		sent := s.sum("samsa_client_org_apache_kafka_producer_record_send_total", labels...)
		if len(families) > 0 && sent > 0 {
			slices.Sort(families)
			t.Logf("%d families of the Java producer's metrics on /metrics (%d records sent so far by its count), %s ... %s",
				len(families), int(sent), families[0], families[len(families)-1])
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pushed metrics of the Java producer (instance %s) on /metrics in 40 s; pushes %q; stderr:\n%s",
				instanceID, grepLines(body, "samsa_telemetry_pushes_total{"), tail(t, stderr.Name()))
		}
		time.Sleep(500 * time.Millisecond) // the client pushes on its own clock, every second; the scrape is the event
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// tail is the last lines of a file, for a failure's message.
func tail(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
