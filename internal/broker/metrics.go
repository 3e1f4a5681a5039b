package broker

// The broker's metrics, served on /metrics of the HTTP listener (http.go)
// and listed with their Kafka JMX names in docs/METRICS.md.
//
// The request path pays for metrics with atomic adds only: no allocation,
// no lock, no map. A request's count and time go to an array indexed by
// API key (and version), built in New; a topic's bytes and messages go to
// the topicMetrics its topicState points to, made when the topic first
// appears. Everything else (log sizes, partition states, connections,
// groups, the controller) is read at scrape time from state the broker
// keeps anyway, so 10,000 partitions cost the scrape and not the produce:
// the families with a series per topic, partition or group partition by
// metrics_text.go's writer, the others by one collector that walks the
// rest.
//
// Each broker has a registry of its own, never Prometheus' global one, so
// the many brokers of a test process do not clash.

import (
	"context"
	"maps"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/version"
)

// maxMetricVersion bounds the request versions counted per API key; a
// version above it (none is served today) is counted under the key only
// by its histogram.
const maxMetricVersion = 31

// requestBuckets are the request time histogram's upper bounds in seconds:
// from a produce to the page cache (well under a millisecond) to a fetch
// long-polling for its fetch.max.wait.ms and a produce waiting for acks=all.
var requestBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// brokerMetrics are the counters the request path bumps and the registry
// /metrics serves.
type brokerMetrics struct {
	registry *prometheus.Registry
	// requests counts, per API key and version, the requests whose
	// handler ran.
	requests [kmsg.MaxKey + 1][maxMetricVersion + 1]atomic.Uint64
	// requestTime is each served API's request time, nil for keys the
	// broker does not serve. Built in New and read-only after, so
	// observing needs no lookup by name.
	requestTime [kmsg.MaxKey + 1]prometheus.Histogram
	// listeners are the counters of each configured listener, by name;
	// read-only after New.
	listeners map[string]*listenerCounters
	// replicationBytesIn counts the record bytes this broker appended as
	// a follower, replicationBytesOut those its followers fetched from it.
	replicationBytesIn, replicationBytesOut atomic.Uint64
	// rt are the request path's times, waits and events of
	// metrics_runtime.go.
	rt runtimeMetrics
}

// listenerCounters are one listener's connection and authentication
// counts.
type listenerCounters struct {
	connectionCreations atomic.Uint64
	// authSuccesses and authFailures count TLS handshakes (on an SSL
	// listener) and SASL exchanges (on a SASL one, re-authentications
	// included), as Kafka's successful- and failed-authentication-total.
	authSuccesses, authFailures atomic.Uint64
}

// topicMetrics are one topic's counters. Every topicState of the topic
// points to the same ones (installTopic carries them over), so a config
// change does not reset them; a topic deleted and created again starts
// from zero, as its new topic ID says it is another topic.
type topicMetrics struct {
	messagesIn, bytesIn, bytesOut          atomic.Uint64
	produceRequests, failedProduceRequests atomic.Uint64
	fetchRequests, failedFetchRequests     atomic.Uint64
}

// topicMetricsOf is what a topicState replacing old counts into.
func topicMetricsOf(old *topicState) *topicMetrics {
	if old != nil && old.metrics != nil {
		return old.metrics
	}
	return new(topicMetrics)
}

func newBrokerMetrics(b *Broker) *brokerMetrics {
	m := &brokerMetrics{registry: prometheus.NewRegistry(), listeners: map[string]*listenerCounters{}}
	for _, l := range b.cfg.Listeners {
		m.listeners[l.Name] = new(listenerCounters)
	}
	for key := range apiTable {
		m.requestTime[key] = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "samsa_request_duration_seconds",
			Help:        "Time from a request read to its response written (or, with no response, handled), per API.",
			ConstLabels: prometheus.Labels{"api": key.Name()},
			Buckets:     requestBuckets,
		})
	}
	m.rt.init()
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "samsa_build_info", Help: "Always 1; the version label says which build runs.",
			ConstLabels: prometheus.Labels{"version": version.String()},
		}, func() float64 { return 1 }),
		&brokerCollector{b: b},
	)
	if b.telemetry != nil {
		m.registry.MustRegister(b.telemetry)
	}
	return m
}

// discardListener takes the counts of a listener the broker does not
// have, so a caller never checks for nil.
var discardListener listenerCounters

// listener is the counters of a configured listener.
func (m *brokerMetrics) listener(name string) *listenerCounters {
	if l, ok := m.listeners[name]; ok {
		return l
	}
	return &discardListener
}

// requestMark is what a response frame remembers of its request, so that
// the writer can time the request once the response is sent.
type requestMark struct {
	key     kmsg.Key
	version int16
	start   time.Time // zero: the frame answers no request (a bare SASL token)
}

// requestHandled counts a request whose handler returned: one that
// answers is timed when its frame is written (requestSent), one that does
// not (acks=0, or an error that closes the connection) now.
func (b *Broker) requestHandled(f *frame, key kmsg.Key, version int16, start time.Time) {
	mark := requestMark{key: key, version: version, start: start}
	if f != nil {
		f.req = mark
		return
	}
	b.metrics.requestDone(&mark)
}

// requestDone counts and times one request.
func (m *brokerMetrics) requestDone(r *requestMark) {
	if r.start.IsZero() || r.key < 0 || int(r.key) >= len(m.requests) {
		return
	}
	if r.version >= 0 && int(r.version) <= maxMetricVersion {
		m.requests[r.key][r.version].Add(1)
	}
	if h := m.requestTime[r.key]; h != nil {
		h.Observe(time.Since(r.start).Seconds())
	}
}

// countProduce counts one partition of a Produce as Kafka's ReplicaManager
// does: each partition of a known topic the client may write is a produce
// request of the topic; an append adds the request's record bytes and the
// batch's records; a refusal counts as failed unless the client or the
// cluster's routine caused it (routineError).
func (ts *topicState) countProduce(topicErr int16, records []byte, code int16) {
	if ts == nil || topicErr != 0 {
		return
	}
	m := ts.metrics
	m.produceRequests.Add(1)
	if code != 0 {
		if !routineError(code) {
			m.failedProduceRequests.Add(1)
		}
		return
	}
	m.bytesIn.Add(uint64(len(records)))
	if h, err := record.ParseHeader(records); err == nil {
		m.messagesIn.Add(uint64(h.NumRecords))
	}
}

// countFetch counts one partition of a consumer's Fetch: a fetch request
// of the topic, the record bytes sent, and a failed read.
func (fp *fetchPart) countFetch(r *fetchResult) {
	if fp.ts == nil {
		return
	}
	m := fp.ts.metrics
	m.fetchRequests.Add(1)
	m.bytesOut.Add(uint64(r.rr.Size))
	if r.errorCode != 0 && !routineError(r.errorCode) {
		m.failedFetchRequests.Add(1)
	}
}

// routineError reports whether a partition's error code is one a client
// meets in the normal run of things and resolves itself (a moved leader,
// an offset out of range, a record too large): Kafka's failed-request
// meters leave these out, as they say nothing about the broker's health.
// Unlike Kafka, a storage error counts as failed: it is the one an
// operator must hear of.
func routineError(code int16) bool {
	switch code {
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.UnknownTopicID.Code, kerr.FencedLeaderEpoch.Code,
		kerr.UnknownLeaderEpoch.Code, kerr.OffsetOutOfRange.Code, kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code,
		kerr.CorruptMessage.Code, kerr.InvalidTopicException.Code, kerr.InvalidRequiredAcks.Code, kerr.ReplicaNotAvailable.Code,
		kerr.UnsupportedForMessageFormat.Code, kerr.TopicAuthorizationFailed.Code:
		return true
	}
	return false
}

// brokerCollector reads, at scrape time, what the broker keeps anyway. It
// is an unchecked collector (Describe sends nothing): the series it
// exports come and go with topics, partitions, listeners and APIs used.
type brokerCollector struct{ b *Broker }

func (*brokerCollector) Describe(chan<- *prometheus.Desc) {}

func (c *brokerCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	c.collectRequests(ch)
	c.collectConnections(ch)
	c.collectRuntime(ch)
	emitGauge(ch, descFetchesWaiting, float64(b.FetchesWaiting()))
	emitCounter(ch, descReplicationBytesIn, float64(b.metrics.replicationBytesIn.Load()))
	emitCounter(ch, descReplicationBytesOut, float64(b.metrics.replicationBytesOut.Load()))
	c.collectReplicationThrottles(ch)
	if img := b.meta.Load(); img != nil {
		emitGauge(ch, descMetadataAppliedOffset, float64(img.Offset()))
	}
	select {
	case <-b.ctrlReady:
		// b.ctrl is set before ctrlReady closes and never again.
		emitGauge(ch, descMetadataCommitLag, float64(b.ctrl.CommitLag()))
		if b.cfg.quorum.controller { // the single node's role too
			c.collectController(ch)
		}
	default:
	}
	select {
	case <-b.started:
		// b.groups is set before started closes.
		c.collectGroups(ch)
	default:
	}
}

var (
	descRequests = prometheus.NewDesc("samsa_requests_total",
		"Requests handled, per API and version.", []string{"api", "version"}, nil)
	descHandlerPanics = prometheus.NewDesc("samsa_request_handler_panics_total",
		"Requests whose handler panicked (each closed its connection), per API.", []string{"api"}, nil)
	descAuthzDenials = prometheus.NewDesc("samsa_authorization_denials_total",
		"Authorization checks the ACL authorizer denied, per API.", []string{"api"}, nil)
	descConnections = prometheus.NewDesc("samsa_connections",
		"Connections open, per listener.", []string{"listener"}, nil)
	descConnectionCreations = prometheus.NewDesc("samsa_connection_creations_total",
		"Connections accepted, per listener.", []string{"listener"}, nil)
	descAuthentications = prometheus.NewDesc("samsa_authentications_total",
		"TLS handshakes and SASL authentications, per listener and result (success or failure).", []string{"listener", "result"}, nil)
	descFetchesWaiting = prometheus.NewDesc("samsa_fetches_waiting",
		"Fetches long-polling for data right now (the fetch purgatory).", nil, nil)
	descReplicationBytesIn = prometheus.NewDesc("samsa_replication_bytes_in_total",
		"Record bytes this broker appended as a follower.", nil, nil)
	descReplicationBytesOut = prometheus.NewDesc("samsa_replication_bytes_out_total",
		"Record bytes this broker's followers fetched from it.", nil, nil)
	descMetadataAppliedOffset = prometheus.NewDesc("samsa_metadata_applied_offset",
		"Offset of the last metadata log batch this broker applied.", nil, nil)
	descMetadataCommitLag = prometheus.NewDesc("samsa_metadata_commit_lag",
		"Metadata log entries this node knows to be committed and has not applied yet.", nil, nil)
	descControllerActive = prometheus.NewDesc("samsa_controller_active",
		"1 on the active controller, 0 on the other controllers.", nil, nil)
	descOfflinePartitions = prometheus.NewDesc("samsa_controller_offline_partitions",
		"Partitions without a leader, as this controller's metadata sees them.", nil, nil)
	descGlobalTopics = prometheus.NewDesc("samsa_controller_topics",
		"Topics in the cluster, as this controller's metadata sees them.", nil, nil)
	descGlobalPartitions = prometheus.NewDesc("samsa_controller_partitions",
		"Partitions in the cluster, as this controller's metadata sees them.", nil, nil)
	descBrokers = prometheus.NewDesc("samsa_controller_brokers",
		"Registered brokers, fenced or not (state), as this controller's metadata sees them.", []string{"state"}, nil)
	descBalancerEnabled = prometheus.NewDesc("samsa_balancer_enabled",
		"1 when samsa.balancer.enable is true, as this controller reads it.", nil, nil)
	descBalancerState = prometheus.NewDesc("samsa_balancer_state",
		"1 for the balancer's state (off, standby, balanced, moving, blocked), 0 for the others.", []string{"state"}, nil)
	descBalancerInProgress = prometheus.NewDesc("samsa_balancer_moves_in_progress",
		"Reassignments in progress (anyone's) as of the balancer's last round on this controller.", nil, nil)
	descBalancerNotes = prometheus.NewDesc("samsa_balancer_plan_notes",
		"Notes of the balancer's last plan: what it could not do, each with its reason (GET /v1/balancer lists them).", nil, nil)
	descBalancerMoves = prometheus.NewDesc("samsa_balancer_moves_total",
		"Replica moves of this controller's balancer since the process started, by outcome: started, completed, cancelled.", []string{"outcome"}, nil)
	descBalancerElections = prometheus.NewDesc("samsa_balancer_leader_elections_total",
		"Preferred-leader elections this controller's balancer made since the process started.", nil, nil)
	descGroups = prometheus.NewDesc("samsa_groups",
		"Groups this broker coordinates, per state and type (classic or consumer).", []string{"state", "type"}, nil)
)

func emitGauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func emitCounter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// collectRequests exports the APIs used since the start; an API no client
// has called has no series.
func (c *brokerCollector) collectRequests(ch chan<- prometheus.Metric) {
	b := c.b
	m := b.metrics
	for key := range m.requests {
		name := kmsg.Key(key).Name()
		used := false
		for v := range m.requests[key] {
			if n := m.requests[key][v].Load(); n > 0 {
				emitCounter(ch, descRequests, float64(n), name, strconv.Itoa(v))
				used = true
			}
		}
		if used && m.requestTime[key] != nil {
			ch <- m.requestTime[key]
		}
		if n := b.counters.handlerPanics[key].Load(); n > 0 {
			emitCounter(ch, descHandlerPanics, float64(n), name)
		}
		if n := b.counters.authzDenials[key].Load(); n > 0 {
			emitCounter(ch, descAuthzDenials, float64(n), name)
		}
	}
}

func (c *brokerCollector) collectConnections(ch chan<- prometheus.Metric) {
	b := c.b
	open := b.conns.openPerListener()
	for name, l := range b.metrics.listeners {
		emitGauge(ch, descConnections, float64(open[name]), name)
		emitCounter(ch, descConnectionCreations, float64(l.connectionCreations.Load()), name)
		emitCounter(ch, descAuthentications, float64(l.authSuccesses.Load()), name, "success")
		emitCounter(ch, descAuthentications, float64(l.authFailures.Load()), name, "failure")
	}
}

// openPerListener is the connections open on each listener now.
func (l *connLimits) openPerListener() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.mu.open)
}

// collectController exports what a controller sees of the cluster, on
// every node with the controller role as Kafka's controllers do: sum
// none of them across nodes.
func (c *brokerCollector) collectController(ch chan<- prometheus.Metric) {
	ctrl := c.b.ctrl
	active := 0.0
	if ctrl.Active() {
		active = 1
	}
	emitGauge(ch, descControllerActive, active)
	img := ctrl.Image()
	topics := img.Topics()
	partitions, offline := 0, 0
	for _, t := range topics {
		for _, p := range t.Partitions {
			partitions++
			if p.Leader == metadata.NoLeader {
				offline++
			}
		}
	}
	emitGauge(ch, descGlobalTopics, float64(len(topics)))
	emitGauge(ch, descGlobalPartitions, float64(partitions))
	emitGauge(ch, descOfflinePartitions, float64(offline))
	fenced, live := 0, 0
	for _, br := range img.Brokers() {
		if br.Fenced {
			fenced++
		} else {
			live++
		}
	}
	emitGauge(ch, descBrokers, float64(live), "active")
	emitGauge(ch, descBrokers, float64(fenced), "fenced")
	c.collectBalancer(ch)
}

// collectBalancer exports the balancer's state as this controller knows
// it: complete on the active controller only, like the others here.
func (c *brokerCollector) collectBalancer(ch chan<- prometheus.Metric) {
	st := c.b.ctrl.BalancerStatus()
	emitGauge(ch, descBalancerEnabled, boolGauge(st.Enabled))
	for _, s := range []string{controller.BalancerOff, controller.BalancerStandby, controller.BalancerBalanced, controller.BalancerMoving, controller.BalancerBlocked} {
		emitGauge(ch, descBalancerState, boolGauge(st.State == s), s)
	}
	emitGauge(ch, descBalancerInProgress, float64(len(st.InProgress)))
	emitGauge(ch, descBalancerNotes, float64(len(st.Notes)))
	emitCounter(ch, descBalancerMoves, float64(st.MovesStarted), "started")
	emitCounter(ch, descBalancerMoves, float64(st.MovesCompleted), "completed")
	emitCounter(ch, descBalancerMoves, float64(st.MovesCancelled), "cancelled")
	emitCounter(ch, descBalancerElections, float64(st.LeaderElections))
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collectGroups counts the groups this broker coordinates by state and
// type, from the coordinator's own listing.
func (c *brokerCollector) collectGroups(ch chan<- prometheus.Metric) {
	b := c.b
	if b.groups == nil {
		return
	}
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 5
	ctx, cancel := context.WithTimeout(b.tasks.Context(), 5*time.Second)
	defer cancel()
	type stateType struct{ state, typ string }
	n := map[stateType]int{}
	for _, g := range b.groups.ListGroups(ctx, req).Groups {
		n[stateType{g.GroupState, g.GroupType}]++
	}
	for k, v := range n {
		emitGauge(ch, descGroups, float64(v), k.state, k.typ)
	}
}
