package broker

// The metrics metrics.go leaves out, each listed with its Kafka JMX name
// in docs/METRICS.md: how the broker spends its time and what it waits on
// (a request's time split as Kafka's RequestMetrics split it, the
// purgatories, throttling, Samsa's equivalents of Kafka's idle
// percentages), what the layers below did (flushes, compaction, ISR
// changes, group rebalances and offsets, transactions), and who is
// connected (by principal, by client software).
//
// The request path pays for them as for metrics.go's, with clock reads,
// atomic adds and histogram observations into arrays built in New: no
// allocation, no lock. The layers below count into atomics of their own
// (storage.Stats, group.Stats), which the collector reads when scraped;
// the census of connections changes only as connections start,
// authenticate, name their software and end.

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/quota"
	"github.com/samsa-io/samsa/internal/storage"
)

// fineBuckets are the upper bounds in seconds of the histograms of the
// short parts of a request (decoding it, writing its response): from
// 10 µs, where requestBuckets start at 100 µs.
var fineBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// runtimeMetrics are brokerMetrics' second half (brokerMetrics.rt).
type runtimeMetrics struct {
	// queueTime is each served API's time from its frame read to its
	// handler starting, sendTime the time its response took to write;
	// nil for keys the broker does not serve. Built in New, read-only
	// after.
	queueTime, sendTime [kmsg.MaxKey + 1]prometheus.Histogram
	// handlerNanos is the time requests spent in their handler, per API
	// key, leaving out what they waited in a purgatory (conn.purgatory).
	handlerNanos [kmsg.MaxKey + 1]atomic.Uint64
	// purgatoryTime is, per purgatory, how long the requests that waited
	// in it waited.
	purgatoryTime [numPurgatories]prometheus.Histogram
	// producesWaiting is the number of acks=all produces waiting for
	// their followers right now (Kafka's produce purgatory size).
	producesWaiting gauge
	// isrShrinks and isrExpands count the ISR changes this broker's
	// leaders proposed and the controller committed, isrUpdateFailures
	// those refused or not sent (proposeISR).
	isrShrinks, isrExpands, isrUpdateFailures atomic.Uint64
	// throttleNanos and throttles are, per kind of client quota (by
	// quota.Kind), the throttle times it asked and how many requests it
	// throttled; throttledRequests the requests throttled, per API key.
	throttleNanos, throttles [len(quotaNames)]atomic.Uint64
	throttledRequests        [kmsg.MaxKey + 1]atomic.Uint64
	// census counts the open connections by principal and by client
	// software.
	census connCensus
}

func (m *runtimeMetrics) init() {
	for key := range apiTable {
		labels := prometheus.Labels{"api": key.Name()}
		m.queueTime[key] = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "samsa_request_queue_seconds",
			Help:        "Time from a request read to its handler starting (decoding it, and any wait for the broker to start), per API.",
			ConstLabels: labels,
			Buckets:     fineBuckets,
		})
		m.sendTime[key] = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "samsa_response_send_seconds",
			Help:        "Time to write a response to its socket, per API.",
			ConstLabels: labels,
			Buckets:     fineBuckets,
		})
	}
	for p, name := range purgatoryNames {
		m.purgatoryTime[p] = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "samsa_purgatory_wait_seconds",
			Help:        "Time requests waited in a purgatory: acks=all produces for their followers, fetches for data.",
			ConstLabels: prometheus.Labels{"operation": name},
			Buckets:     requestBuckets,
		})
	}
}

// The request path.

// handlerDone times a request's stay in the queue (from start, its frame
// read, to began, its handler's start) and in its handler, less what it
// waited in a purgatory.
func (m *runtimeMetrics) handlerDone(key kmsg.Key, start, began time.Time, purgatory time.Duration) {
	if key < 0 || int(key) >= len(m.queueTime) || m.queueTime[key] == nil {
		return
	}
	m.queueTime[key].Observe(began.Sub(start).Seconds())
	if busy := time.Since(began) - purgatory; busy > 0 {
		m.handlerNanos[key].Add(uint64(busy))
	}
}

// responseSent times the write of a response that began at sendStart.
func (m *runtimeMetrics) responseSent(r *requestMark, sendStart time.Time) {
	if r.start.IsZero() || r.key < 0 || int(r.key) >= len(m.sendTime) || m.sendTime[r.key] == nil {
		return
	}
	m.sendTime[r.key].Observe(time.Since(sendStart).Seconds())
}

// purgatory is what a request may wait for, as Kafka parks it in a
// purgatory: an acks=all produce for its followers, a fetch for data.
type purgatory int

const (
	purgatoryProduce purgatory = iota
	purgatoryFetchConsumer
	purgatoryFetchFollower
	numPurgatories
)

// purgatoryNames are the purgatories' label values, Kafka's request names
// for the remote time of its RequestMetrics.
var purgatoryNames = [numPurgatories]string{"Produce", "FetchConsumer", "FetchFollower"}

// waited records that the request being handled waited d in purgatory p.
func (c *conn) waited(p purgatory, d time.Duration) {
	c.purgatory += d
	c.b.metrics.rt.purgatoryTime[p].Observe(d.Seconds())
}

// quotaNames are the quota label values, by quota.Kind.
var quotaNames = [...]string{
	quota.Produce: "produce", quota.Fetch: "fetch", quota.Request: "request", quota.ControllerMutation: "controller_mutation",
}

// throttleBy makes the request being handled wait at least d, which a
// quota of kind k asked.
func (c *conn) throttleBy(k quota.Kind, d time.Duration) {
	if d > 0 && int(k) < len(quotaNames) {
		c.b.metrics.rt.throttleNanos[k].Add(uint64(d))
		c.b.metrics.rt.throttles[k].Add(1)
	}
	c.throttleFor(d)
}

// requestThrottled counts a request whose quotas throttled it.
func (m *runtimeMetrics) requestThrottled(key kmsg.Key) {
	if key >= 0 && int(key) < len(m.throttledRequests) {
		m.throttledRequests[key].Add(1)
	}
}

// The census of connections.

// connCensus counts the open connections by who they authenticated as and
// by the client software they said they are (ApiVersions v3+, KIP-511).
// Each connection is counted under one of each from its start (after its
// TLS handshake) to its end; a connection that authenticates or names its
// software moves. The maps hold only what open connections have, so they
// are bounded by the connection limits.
type connCensus struct {
	mu struct {
		sync.Mutex
		principals map[auth.Principal]int
		software   map[clientSoftware]int
	}
}

// clientSoftware is a connection's listener and the client software name
// and version it gave, Kafka's labels of its connections by client.
type clientSoftware struct{ listener, name, version string }

// unknownSoftware is Kafka's name and version of a client that has not
// said (ClientInformation.UNKNOWN_NAME_OR_VERSION).
const unknownSoftware = "unknown"

// maxCensusSeries bounds the principals, and the client software, a
// scrape exports one by one: past it, the ones with the fewest
// connections are summed under "other".
const maxCensusSeries = 100

// joinCensus counts a connection that has started, under its principal
// so far and as unknown software.
func (c *conn) joinCensus() {
	m := &c.b.metrics.rt.census
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.principals == nil {
		m.mu.principals, m.mu.software = map[auth.Principal]int{}, map[clientSoftware]int{}
	}
	c.census.principal = c.principal
	c.census.software = clientSoftware{listener: c.listener, name: unknownSoftware, version: unknownSoftware}
	m.mu.principals[c.census.principal]++
	m.mu.software[c.census.software]++
	c.census.counted = true
}

// leaveCensus forgets a connection that has ended.
func (c *conn) leaveCensus() {
	if !c.census.counted {
		return
	}
	m := &c.b.metrics.rt.census
	m.mu.Lock()
	defer m.mu.Unlock()
	decrement(m.mu.principals, c.census.principal)
	decrement(m.mu.software, c.census.software)
	c.census.counted = false
}

// authenticatedAs moves the connection to the principal it authenticated
// as.
func (c *conn) authenticatedAs(p auth.Principal) {
	if !c.census.counted || p == c.census.principal {
		return
	}
	m := &c.b.metrics.rt.census
	m.mu.Lock()
	defer m.mu.Unlock()
	decrement(m.mu.principals, c.census.principal)
	c.census.principal = p
	m.mu.principals[p]++
}

// identifiedAs moves the connection to the client software it named.
func (c *conn) identifiedAs(name, version string) {
	sw := clientSoftware{listener: c.listener, name: name, version: version}
	if !c.census.counted || sw == c.census.software {
		return
	}
	sw.name, sw.version = strings.Clone(name), strings.Clone(version) // the request's buffer is reused
	m := &c.b.metrics.rt.census
	m.mu.Lock()
	defer m.mu.Unlock()
	decrement(m.mu.software, c.census.software)
	c.census.software = sw
	m.mu.software[sw]++
}

// decrement takes one from k's count, and k out of m at 0.
func decrement[K comparable](m map[K]int, k K) {
	if m[k] <= 1 {
		delete(m, k)
		return
	}
	m[k]--
}

// The collector: what the scrape reads.

// collectRuntime exports runtimeMetrics, for the APIs used since the
// start as collectRequests does, and what the Go scheduler says.
func (c *brokerCollector) collectRuntime(ch chan<- prometheus.Metric) {
	m := c.b.metrics
	for key := range m.requests {
		if !apiUsed(m, key) || m.rt.queueTime[key] == nil {
			continue
		}
		ch <- m.rt.queueTime[key]
		ch <- m.rt.sendTime[key]
		name := kmsg.Key(key).Name()
		emitCounter(ch, descHandlerSeconds, float64(m.rt.handlerNanos[key].Load())/1e9, name)
		if n := m.rt.throttledRequests[key].Load(); n > 0 {
			emitCounter(ch, descThrottledRequests, float64(n), name)
		}
	}
	for k, name := range quotaNames {
		emitCounter(ch, descQuotaThrottles, float64(m.rt.throttles[k].Load()), name)
		emitCounter(ch, descQuotaThrottleSeconds, float64(m.rt.throttleNanos[k].Load())/1e9, name)
	}
	for _, h := range m.rt.purgatoryTime {
		ch <- h
	}
	v, _ := m.rt.producesWaiting.watch()
	emitGauge(ch, descProducesWaiting, float64(v))
	emitCounter(ch, descISRShrinks, float64(m.rt.isrShrinks.Load()))
	emitCounter(ch, descISRExpands, float64(m.rt.isrExpands.Load()))
	emitCounter(ch, descISRUpdateFailures, float64(m.rt.isrUpdateFailures.Load()))
	collectSchedulerLatency(ch)
	c.collectCensus(ch)
	c.collectStorage(ch)
	select {
	case <-c.b.started:
		// b.groups and b.txns are set before started closes.
		c.collectCoordinators(ch)
	default:
	}
}

// apiUsed reports whether a request of the key was handled since the
// start.
func apiUsed(m *brokerMetrics, key int) bool {
	for v := range m.requests[key] {
		if m.requests[key][v].Load() > 0 {
			return true
		}
	}
	return false
}

// schedulerBuckets are the upper bounds in seconds the Go runtime's
// scheduling latencies are exported in: its own buckets are finer (and
// many), which no dashboard needs.
var schedulerBuckets = []float64{.000001, .000005, .00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1}

// collectSchedulerLatency exports the runtime's /sched/latencies:seconds,
// the time goroutines spent runnable before running: Samsa has no request
// queue or thread pool whose saturation shows as Kafka's idle
// percentages, and a broker short of CPU shows here instead, every
// connection's goroutine waiting for a processor.
func collectSchedulerLatency(ch chan<- prometheus.Metric) {
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return
	}
	count, sum, buckets := rebucket(sample[0].Value.Float64Histogram(), schedulerBuckets)
	ch <- prometheus.MustNewConstHistogram(descSchedulerLatency, count, sum, buckets)
}

// rebucket turns a runtime histogram into Prometheus' cumulative buckets
// at bounds. A runtime bucket counts under the first bound at or above
// its upper edge, so a bucket never claims a sample faster than it was.
// The sum, which the runtime does not keep, is estimated at each bucket's
// middle (its lower edge for the last, unbounded one; nothing for a first
// one unbounded below, which holds no latency).
func rebucket(h *metrics.Float64Histogram, bounds []float64) (uint64, float64, map[float64]uint64) {
	out := make(map[float64]uint64, len(bounds))
	var count uint64
	var sum float64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		count += n
		switch {
		case math.IsInf(hi, 1):
			sum += float64(n) * lo
		case !math.IsInf(lo, -1):
			sum += float64(n) * (lo + hi) / 2
		}
		for _, b := range bounds {
			if hi <= b {
				out[b] += n
			}
		}
	}
	for _, b := range bounds {
		if _, ok := out[b]; !ok {
			out[b] = 0
		}
	}
	return count, sum, out
}

// collectCensus exports the connections by principal and by client
// software, each capped at maxCensusSeries series and "other".
func (c *brokerCollector) collectCensus(ch chan<- prometheus.Metric) {
	m := &c.b.metrics.rt.census
	m.mu.Lock()
	principals, software := maps.Clone(m.mu.principals), maps.Clone(m.mu.software)
	m.mu.Unlock()
	byName := make(map[string]int, len(principals))
	for p, n := range principals {
		byName[p.String()] += n
	}
	for _, e := range topCounts(byName, maxCensusSeries, "other") {
		emitGauge(ch, descPrincipalConnections, float64(e.n), e.key)
	}
	for _, e := range topCounts(software, maxCensusSeries, clientSoftware{listener: "other", name: "other", version: "other"}) {
		emitGauge(ch, descClientConnections, float64(e.n), e.key.listener, e.key.name, e.key.version)
	}
}

// counted is a key of the census and its connections.
type counted[K comparable] struct {
	key K
	n   int
}

// topCounts lists the limit keys with the largest counts (ties in the
// order of their keys' printing), and the sum of the rest under other.
func topCounts[K comparable](m map[K]int, limit int, other K) []counted[K] {
	out := make([]counted[K], 0, len(m))
	for k, n := range m {
		out = append(out, counted[K]{k, n})
	}
	if len(out) <= limit {
		return out
	}
	slices.SortFunc(out, func(a, b counted[K]) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return cmp.Compare(fmt.Sprint(a.key), fmt.Sprint(b.key))
	})
	rest := 0
	for _, e := range out[limit:] {
		rest += e.n
	}
	return append(out[:limit], counted[K]{other, rest})
}

// collectStorage exports what the log manager counted of its logs' work:
// flush times and the cleaner's progress; and the files its logs hold.
func (c *brokerCollector) collectStorage(ch chan<- prometheus.Metric) {
	emitGauge(ch, descLogOpenFiles, float64(c.b.logs.OpenFiles()))
	if limit := c.b.logs.MaxOpenFiles(); limit > 0 {
		emitGauge(ch, descLogOpenFilesMax, float64(limit))
	}
	stats := c.b.logs.Stats()
	ft := stats.FlushTimes()
	buckets := make(map[float64]uint64, len(storage.FlushBuckets))
	for i, bound := range storage.FlushBuckets {
		buckets[bound] = ft.Buckets[i]
	}
	ch <- prometheus.MustNewConstHistogram(descLogFlush, ft.Count, ft.Seconds, buckets)

	p := stats.Cleaner()
	emitCounter(ch, descCleanerPasses, float64(p.Passes), "success")
	emitCounter(ch, descCleanerPasses, float64(p.FailedPasses), "failure")
	emitCounter(ch, descCleanerReadBytes, float64(p.BytesRead))
	emitCounter(ch, descCleanerWrittenBytes, float64(p.BytesWritten))
	emitCounter(ch, descCleanerRecordsRemoved, float64(p.RecordsRemoved))
	emitCounter(ch, descCleanerSeconds, p.PassTime.Seconds())
	emitGauge(ch, descCleanerLastPassSeconds, p.LastPassTime.Seconds())
	emitGauge(ch, descCleanerBufferUtilization, p.LastBufferUtilization)
	emitGauge(ch, descCleanerMaxDirtyRatio, p.MaxDirtyRatio)
	emitGauge(ch, descCleanerMaxCompactionDelay, p.MaxCompactionDelay.Seconds())
	emitGauge(ch, descCleanerUncleanable, float64(p.Uncleanable))
	if p.Rounds > 0 {
		emitGauge(ch, descCleanerLastRound, float64(p.LastRound.UnixNano())/1e9)
	}
}

// collectCoordinators exports the group coordinator's counts and the
// transaction coordinator's transactions by state.
func (c *brokerCollector) collectCoordinators(ch chan<- prometheus.Metric) {
	if gc := c.b.groups; gc != nil {
		gs := gc.Stats()
		emitCounter(ch, descGroupRebalances, float64(gs.ClassicRebalances), "classic")
		emitCounter(ch, descGroupRebalances, float64(gs.ConsumerRebalances), "consumer")
		emitCounter(ch, descOffsetCommits, float64(gs.OffsetCommits))
		emitCounter(ch, descOffsetExpirations, float64(gs.OffsetExpirations))
		emitCounter(ch, descOffsetDeletions, float64(gs.OffsetDeletions))
	}
	if tc := c.b.txns; tc != nil {
		// The coordinator's own listing, as kafka-transactions.sh list
		// shows it; nothing while a partition of __transaction_state
		// loads, rather than a count that misses its IDs.
		resp := tc.ListTransactions(kmsg.NewPtrListTransactionsRequest())
		if resp.ErrorCode != 0 {
			return
		}
		n := map[string]int{}
		for _, st := range txnStates {
			n[st] = 0
		}
		for _, t := range resp.TransactionStates {
			n[t.TransactionState]++
		}
		for st, v := range n {
			emitGauge(ch, descTransactions, float64(v), st)
		}
	}
}

// txnStates are the transaction states always exported, 0 when no
// transaction is in them, so a dashboard's series do not come and go.
var txnStates = []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort"}

var (
	descProducesWaiting = prometheus.NewDesc("samsa_produces_waiting",
		"Produces with acks=all waiting for their followers right now (the produce purgatory).", nil, nil)
	descHandlerSeconds = prometheus.NewDesc("samsa_request_handler_seconds_total",
		"Time requests spent in their handler, purgatory waits left out, per API (the busy time of Kafka's request handlers).", []string{"api"}, nil)
	descISRShrinks = prometheus.NewDesc("samsa_isr_shrinks_total",
		"ISR shrinks this broker's leaders proposed and the controller committed.", nil, nil)
	descISRExpands = prometheus.NewDesc("samsa_isr_expands_total",
		"ISR expansions this broker's leaders proposed and the controller committed.", nil, nil)
	descISRUpdateFailures = prometheus.NewDesc("samsa_isr_update_failures_total",
		"ISR changes this broker's leaders proposed that the controller refused or never received.", nil, nil)
	descGroupRebalances = prometheus.NewDesc("samsa_group_rebalances_total",
		"Rebalances of the groups this broker coordinates, per type: classic groups' completed rebalances, consumer groups' epoch bumps.", []string{"type"}, nil)
	descOffsetCommits = prometheus.NewDesc("samsa_group_offset_commits_total",
		"Partitions' offsets committed to the groups this broker coordinates (OffsetCommit and TxnOffsetCommit).", nil, nil)
	descOffsetExpirations = prometheus.NewDesc("samsa_group_offset_expirations_total",
		"Committed offsets deleted when their retention passed.", nil, nil)
	descOffsetDeletions = prometheus.NewDesc("samsa_group_offset_deletions_total",
		"Committed offsets deleted by OffsetDelete.", nil, nil)
	descTransactions = prometheus.NewDesc("samsa_transactions",
		"Transactional IDs this broker coordinates, per transaction state.", []string{"state"}, nil)
	descQuotaThrottles = prometheus.NewDesc("samsa_quota_throttles_total",
		"Requests a client quota throttled, per quota (produce, fetch, request, controller_mutation).", []string{"quota"}, nil)
	descQuotaThrottleSeconds = prometheus.NewDesc("samsa_quota_throttle_seconds_total",
		"Throttle time client quotas asked of the requests they throttled, per quota.", []string{"quota"}, nil)
	descThrottledRequests = prometheus.NewDesc("samsa_throttled_requests_total",
		"Requests throttled by a client quota, per API; the connection was muted (or the response held back) for the longest throttle time.", []string{"api"}, nil)
	descPrincipalConnections = prometheus.NewDesc("samsa_principal_connections",
		"Connections open, per principal they authenticated as (User:ANONYMOUS until they do); past 100 principals, the rest under \"other\".", []string{"principal"}, nil)
	descClientConnections = prometheus.NewDesc("samsa_client_connections",
		"Connections open, per listener and the client software name and version they gave (ApiVersions v3+; \"unknown\" until they do); past 100, the rest under \"other\".",
		[]string{"listener", "client_software_name", "client_software_version"}, nil)
	descLogOpenFiles = prometheus.NewDesc("samsa_log_open_files",
		"Files the logs hold open: one per segment, and briefly those being written.", nil, nil)
	descLogOpenFilesMax = prometheus.NewDesc("samsa_log_open_files_max",
		"The most files the logs may hold open (three quarters of the process's open-files limit): past it a new partition's log is refused.", nil, nil)
	descLogFlush = prometheus.NewDesc("samsa_log_flush_seconds",
		"Time each log flush (the fsync of a partition's unflushed segments) took.", nil, nil)
	descCleanerPasses = prometheus.NewDesc("samsa_log_cleaner_passes_total",
		"Cleaning passes of compacted logs (one log each), per result (success or failure).", []string{"result"}, nil)
	descCleanerReadBytes = prometheus.NewDesc("samsa_log_cleaner_read_bytes_total",
		"Bytes of the segments the cleaner's passes read.", nil, nil)
	descCleanerWrittenBytes = prometheus.NewDesc("samsa_log_cleaner_written_bytes_total",
		"Bytes of the cleaned segments the cleaner's passes wrote.", nil, nil)
	descCleanerRecordsRemoved = prometheus.NewDesc("samsa_log_cleaner_records_removed_total",
		"Records the cleaner's passes removed.", nil, nil)
	descCleanerSeconds = prometheus.NewDesc("samsa_log_cleaner_seconds_total",
		"Time the cleaner's passes took.", nil, nil)
	descCleanerLastPassSeconds = prometheus.NewDesc("samsa_log_cleaner_last_pass_seconds",
		"Time the cleaner's last pass took.", nil, nil)
	descCleanerBufferUtilization = prometheus.NewDesc("samsa_log_cleaner_last_pass_buffer_utilization_ratio",
		"Share of the dedupe buffer (log.cleaner.dedupe.buffer.size) the cleaner's last pass used.", nil, nil)
	descCleanerMaxDirtyRatio = prometheus.NewDesc("samsa_log_cleaner_max_dirty_ratio",
		"The largest dirty ratio of the compacted logs at the cleaner's last round.", nil, nil)
	descCleanerMaxCompactionDelay = prometheus.NewDesc("samsa_log_cleaner_max_compaction_delay_seconds",
		"By how much the most overdue compacted log was past max.compaction.lag.ms at the cleaner's last round.", nil, nil)
	descCleanerUncleanable = prometheus.NewDesc("samsa_log_cleaner_uncleanable_partitions",
		"Compacted logs whose cleaning pass failed in the cleaner's last round.", nil, nil)
	descCleanerLastRound = prometheus.NewDesc("samsa_log_cleaner_last_round_timestamp_seconds",
		"When the cleaner's last round ended, in seconds since the Unix epoch.", nil, nil)
	descSchedulerLatency = prometheus.NewDesc("samsa_scheduler_latency_seconds",
		"Time goroutines waited, runnable, for a processor (GOMAXPROCS) to run on; the sum is estimated from the runtime's buckets.", nil, nil)
)
