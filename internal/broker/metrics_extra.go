package broker

import "github.com/prometheus/client_golang/prometheus"

// RegisterMetrics adds a collector to the broker's /metrics: the clients
// serve runs in-process (the mirror) report there too.
func (b *Broker) RegisterMetrics(c prometheus.Collector) error {
	return b.metrics.registry.Register(c)
}
