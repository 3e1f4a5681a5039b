package broker

// The metrics of how the broker spends its time and what it waits on, in
// addition to metrics.go's counts: a request's time split as Kafka's
// RequestMetrics split it (queue, send), the purgatories (acks=all
// produces waiting for their followers, fetches long-polling), listed in
// docs/METRICS.md. The
// request path pays with clock reads and histogram observations into
// arrays built in New, as metrics.go's: no allocation, no lock.

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	// purgatoryTime is, per purgatory, how long the requests that waited
	// in it waited.
	purgatoryTime [numPurgatories]prometheus.Histogram
	// producesWaiting is the number of acks=all produces waiting for
	// their followers right now (Kafka's produce purgatory size).
	producesWaiting gauge
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

// waited records that the request being handled waited d in purgatory p.
func (c *conn) waited(p purgatory, d time.Duration) {
	c.b.metrics.rt.purgatoryTime[p].Observe(d.Seconds())
}

// handlerStarts times a request's stay in the queue, from start, its
// frame read, to began, its handler's start.
func (m *runtimeMetrics) handlerStarts(key kmsg.Key, start, began time.Time) {
	if key < 0 || int(key) >= len(m.queueTime) || m.queueTime[key] == nil {
		return
	}
	m.queueTime[key].Observe(began.Sub(start).Seconds())
}

// responseSent times the write of a response that began at sendStart.
func (m *runtimeMetrics) responseSent(r *requestMark, sendStart time.Time) {
	if r.start.IsZero() || r.key < 0 || int(r.key) >= len(m.sendTime) || m.sendTime[r.key] == nil {
		return
	}
	m.sendTime[r.key].Observe(time.Since(sendStart).Seconds())
}

// collectRuntime exports runtimeMetrics, for the APIs used since the
// start as collectRequests does.
func (c *brokerCollector) collectRuntime(ch chan<- prometheus.Metric) {
	m := c.b.metrics
	for key := range m.requests {
		if !apiUsed(m, key) || m.rt.queueTime[key] == nil {
			continue
		}
		ch <- m.rt.queueTime[key]
		ch <- m.rt.sendTime[key]
	}
	for _, h := range m.rt.purgatoryTime {
		ch <- h
	}
	v, _ := m.rt.producesWaiting.watch()
	emitGauge(ch, descProducesWaiting, float64(v))
}

var descProducesWaiting = prometheus.NewDesc("samsa_produces_waiting",
	"Produces with acks=all waiting for their followers right now (the produce purgatory).", nil, nil)

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
