package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// prometheusServer is a real Prometheus (Debian's prometheus package)
// scraping one broker every second.
type prometheusServer struct {
	addr string
}

// startPrometheus starts Prometheus scraping target (host:port) and
// waits until it is ready. It is skipped where Prometheus is not
// installed, unless SAMSA_REQUIRE_PROMETHEUS is set (CI sets it): there
// a missing Prometheus fails the test.
func startPrometheus(t *testing.T, target string) *prometheusServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("SAMSA_REQUIRE_PROMETHEUS") != "" {
			t.Fatal("prometheus is not installed (apt-get install prometheus) and SAMSA_REQUIRE_PROMETHEUS is set")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: samsa
    static_configs:
      - targets: ['%s']
`, target)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The port is chosen before Prometheus binds it; another process may
	// take it in between, so a start that fails is tried again.
	for attempt := 0; ; attempt++ {
		addr := "127.0.0.1:" + freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"+strconv.Itoa(attempt)),
			"--web.listen-address="+addr, "--log.level=warn")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			cancel()
			<-exited
		})
		p := &prometheusServer{addr: addr}
		deadline := time.After(e2eTimeout)
		for {
			if p.ready() {
				return p
			}
			select {
			case err := <-exited:
				if attempt < 2 {
					t.Logf("prometheus exited (%v), trying another port:\n%s", err, out.String())
					goto next
				}
				t.Fatalf("prometheus exited: %v\n%s", err, out.String())
			case <-deadline:
				t.Fatalf("prometheus not ready after %v:\n%s", e2eTimeout, out.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
	next:
		cancel()
	}
}

func (p *prometheusServer) ready() bool {
	resp, err := (&http.Client{Timeout: time.Second}).Get("http://" + p.addr + "/-/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// query evaluates an instant PromQL query whose answer is one sample, and
// reports whether there is one.
func (p *prometheusServer) query(t *testing.T, q string) (float64, bool) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", q, body.Error)
	}
	if len(body.Data.Result) != 1 {
		return 0, false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %q", q, s)
	}
	return v, true
}

// await waits until Prometheus answers q with a value check accepts, and
// fails with the last answer when it never does.
func (p *prometheusServer) await(t *testing.T, q string, what string, check func(float64) bool) float64 {
	t.Helper()
	deadline := time.Now().Add(e2eTimeout)
	for {
		v, ok := p.query(t, q)
		if ok && check(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Prometheus answers %s with %v (a sample: %v)", what, q, v, ok)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// workloadHooks count, on the client side, what the broker's metrics must
// show: the Produce requests and their round trips, and the record bytes
// fetched.
type workloadHooks struct {
	mu              sync.Mutex
	produceRequests int
	produceTime     time.Duration
	fetchedBytes    int64
	fetchedBatches  int
}

func (h *workloadHooks) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key != int16(kmsg.Produce) || e.Err() != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.produceRequests++
	h.produceTime += e.DurationE2E()
}

func (h *workloadHooks) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// franz-go counts a v2 batch's records alone; the broker counts the
	// batch, with its 61 bytes of header.
	h.fetchedBytes += int64(m.CompressedBytes) + recordBatchHeaderSize
	h.fetchedBatches++
}

// recordBatchHeaderSize is a v2 record batch's bytes before its records.
const recordBatchHeaderSize = 61

// A real Prometheus scraping a broker sees, through its query API, what a
// workload did: the records produced, the bytes consumed, the Produce
// requests with a total time within what the client measured, and the
// consumer group's lag.
func TestPrometheusSeesTheWorkload(t *testing.T) {
	b := startHTTPBroker(t)
	prom := startPrometheus(t, b.HTTPAddr())
	const topic, group = "observed", "observed-group"
	const consumed, lagging = 400, 37
	createTopic(t, b, topic, 2)
	hooks := &workloadHooks{}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()

	prod := newClient(t, b.Addr(), kgo.DefaultProduceTopic(topic), kgo.WithHooks(hooks))
	value := make([]byte, 1000)
	for i := range consumed {
		r := &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := newClient(t, b.Addr(), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(hooks), kgo.DisableAutoCommit())
	for got := 0; got < consumed; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cons.Close()
	// A fetch the consumer left long-polling would send the late
	// records to a closed connection, which the broker counts as sent.
	for deadline := time.Now().Add(e2eTimeout); b.FetchesWaiting() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the closed consumer's fetch still waits")
		}
	}
	for i := range lagging {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte("late-" + strconv.Itoa(i)), Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	hooks.mu.Lock()
	produceRequests, produceTime, fetched := hooks.produceRequests, hooks.produceTime, hooks.fetchedBytes
	t.Logf("%d Produce requests, %d batches fetched", produceRequests, hooks.fetchedBatches)
	hooks.mu.Unlock()

	sel := `{topic="` + topic + `"}`
	prom.await(t, "sum(samsa_topic_messages_in_total"+sel+")", "messages in",
		func(v float64) bool { return v == consumed+lagging })
	prom.await(t, "sum(samsa_topic_bytes_out_total"+sel+")", fmt.Sprintf("bytes out (the consumer read %d)", fetched),
		func(v float64) bool { return v == float64(fetched) })
	prom.await(t, `sum(samsa_request_duration_seconds_count{api="Produce"})`, fmt.Sprintf("Produce requests timed (the producer sent %d)", produceRequests),
		func(v float64) bool { return v == float64(produceRequests) })
	// The broker's time for a request is part of the client's round
	// trip, so the sum of the one is below the sum of the other, and
	// above nothing.
	prom.await(t, `sum(samsa_request_duration_seconds_sum{api="Produce"})`, fmt.Sprintf("Produce time (the producer's round trips took %v)", produceTime),
		func(v float64) bool { return v > 0 && v <= produceTime.Seconds() })
	prom.await(t, `sum(samsa_requests_total{api="Produce"})`, "Produce requests counted",
		func(v float64) bool { return v == float64(produceRequests) })
	prom.await(t, `histogram_quantile(0.99, sum by (le) (samsa_request_duration_seconds_bucket{api="Produce"}))`, "Produce p99 latency",
		func(v float64) bool { return v > 0 && v <= 10 })
	prom.await(t, `sum(samsa_consumer_group_lag{group="`+group+`",topic="`+topic+`"})`, "consumer lag",
		func(v float64) bool { return v == lagging })
}
