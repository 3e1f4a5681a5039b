// Package telemetry is the broker's side of KIP-714, client metrics and
// observability: which subscriptions a client instance matches, the rules
// of GetTelemetrySubscriptions and PushTelemetry as Kafka's
// ClientMetricsManager applies them, the decoding of pushed payloads
// (OpenTelemetry's OTLP MetricsData, compressed with a Kafka codec), and a
// store of the pushed values that a Prometheus collector re-exports on the
// broker's /metrics.
//
// The broker owns the wire: it decodes the requests, asks a Manager, and
// encodes what the Manager answers. Subscriptions come from the metadata
// (config resources of type CLIENT_METRICS, checked by
// config.ParseClientMetrics); the broker hands the Manager the whole set
// each time the metadata changes it. Time arrives as arguments and through
// an injected clock, so every rule is tested with a manual clock.
//
// Memory is bounded: the Manager keeps at most MaxInstances client
// instances (Kafka's cache size), each forgotten after max(60 s, three
// push intervals) without a request; the Store keeps the series of at most
// MaxStoredClients clients, MaxSeriesPerClient each and MaxSeries in all,
// forgets a client after a terminating push or three push intervals
// without one, and counts what it drops.
//
// The package is an L1 engine: it imports the config catalog (L1), the
// record codecs and the clock (L0), the OTLP protobuf types and
// client_golang, and nothing of the broker.
package telemetry
