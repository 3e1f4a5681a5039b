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
	lag            *prometheus.GaugeVec
	storeEntries   *prometheus.GaugeVec
	restoreLeft    *prometheus.GaugeVec
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
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "samsa", Subsystem: "streams", Name: "task_lag_records",
		Help: "Records of a task's source partitions not processed yet: fetched and waiting, plus what the broker has past the fetch position (updated at each commit)."}, []string{"task"})
	m.storeEntries = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "samsa", Subsystem: "streams", Name: "store_entries",
		Help: "Approximate number of entries of a task's key-value store (updated at each commit; pebble estimates)."}, []string{"task", "store"})
	m.restoreLeft = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "samsa", Subsystem: "streams", Name: "restore_remaining_records",
		Help: "Changelog records a restoring store still has to read (0 once restored)."}, []string{"task", "store"})
	m.reg.MustRegister(m.lag, m.storeEntries, m.restoreLeft)
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
