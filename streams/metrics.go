package streams

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are an application's Prometheus metrics, in a registry of its
// own (never the global one), served by App.MetricsHandler.
type metrics struct {
	reg          *prometheus.Registry
	processed    *prometheus.CounterVec
	skipped      *prometheus.CounterVec
	dropped      *prometheus.CounterVec
	punctuations *prometheus.CounterVec
	restored     *prometheus.CounterVec
	// standbyRecords counts changelog records applied to standby stores.
	standbyRecords prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	vec := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "samsa", Subsystem: "streams", Name: name, Help: help}, []string{"task"})
		m.reg.MustRegister(c)
		return c
	}
	m.processed = vec("records_processed_total", "Records a task processed (Kafka Streams' process-total).")
	m.skipped = vec("records_skipped_total", "Records skipped before processing: a deserialization error under LogAndContinue, a negative timestamp.")
	m.dropped = vec("records_dropped_total", "Records a processor dropped (Kafka Streams' dropped-records-total): null keys, late records past the grace period, expired windows.")
	m.punctuations = vec("punctuations_total", "Punctuations run.")
	m.restored = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "samsa", Subsystem: "streams", Name: "restored_records_total",
		Help: "Changelog records restored into a task's store (Kafka Streams' restore-total)."}, []string{"task", "store"})
	m.reg.MustRegister(m.restored)
	m.standbyRecords = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "samsa", Subsystem: "streams", Name: "standby_records_total",
		Help: "Changelog records applied to standby tasks' stores (Kafka Streams' update-total of standby tasks)."})
	m.reg.MustRegister(m.standbyRecords)
	return m
}

// taskMetrics are one task's counters.
type taskMetrics struct {
	processed, skipped, dropped, punctuations prometheus.Counter
}

func (m *metrics) forTask(id TaskID) *taskMetrics {
	l := id.String()
	return &taskMetrics{
		processed:    m.processed.WithLabelValues(l),
		skipped:      m.skipped.WithLabelValues(l),
		dropped:      m.dropped.WithLabelValues(l),
		punctuations: m.punctuations.WithLabelValues(l),
	}
}
