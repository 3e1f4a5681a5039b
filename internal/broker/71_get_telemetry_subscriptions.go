package broker

// GetTelemetrySubscriptions (key 71), version 0 (KIP-714).
//
// Tells a client which of its metrics to push, and how: its client
// instance ID (a new random one when it sends the zero UUID; the one it
// sent otherwise), the subscription ID (a hash of what the matching
// subscriptions ask, so it changes when they do and every broker computes
// the same one), the metric name prefixes the client metrics subscriptions
// it matches ask for ("*" for all; none when none matches), the shortest
// of their push intervals (Kafka's default, five minutes, when none
// matches), the codecs a push may use (zstd, lz4, gzip, snappy, Kafka's
// order), telemetry.max.bytes, and delta temporality: counters are pushed
// as the change since the previous push. The rules are Kafka's
// ClientMetricsManager's, in internal/telemetry.
//
// Errors: THROTTLING_QUOTA_EXCEEDED for a request sooner than the push
// interval after the client's last one, unless its last push failed with
// UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE or the
// subscriptions changed since.
//
// Served and advertised only with a receiver for client metrics, the
// HTTP listener that re-exports them (telemetry.go), as Kafka serves it
// only with a telemetry receiver configured. Authorization: none, as in
// Kafka; every client may push its metrics.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/telemetry"
)

func init() {
	registerAPI(apiEntry{key: kmsg.GetTelemetrySubscriptions, min: 0, max: 0, needsTelemetry: true, handle: typed(handleGetTelemetrySubscriptions)})
}

func handleGetTelemetrySubscriptions(b *Broker, c *conn, req *kmsg.GetTelemetrySubscriptionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	s := b.telemetry.GetSubscriptions(telemetry.InstanceID(req.ClientInstanceID), c.telemetryClient())
	resp.ClientInstanceID = s.InstanceID
	if s.Err != nil {
		resp.ErrorCode = s.Err.Code
		c.log.Debug("GetTelemetrySubscriptions refused", "err", s.Err.Message, "why", s.Message)
		return resp, nil
	}
	resp.SubscriptionID = s.SubscriptionID
	resp.AcceptedCompressionTypes = telemetry.AcceptedCompression
	resp.PushIntervalMillis = s.IntervalMs
	resp.TelemetryMaxBytes = b.cfg.Values.Int("telemetry.max.bytes")
	resp.DeltaTemporality = true
	resp.RequestedMetrics = s.Metrics
	if resp.RequestedMetrics == nil {
		resp.RequestedMetrics = []string{}
	}
	return resp, nil
}
