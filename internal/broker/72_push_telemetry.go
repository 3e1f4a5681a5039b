package broker

// PushTelemetry (key 72), version 0 (KIP-714).
//
// A client's metrics, as OpenTelemetry's OTLP MetricsData compressed with
// a Kafka codec (none, gzip, snappy raw or xerial, lz4, zstd). The
// accepted payload's gauges and sums are kept per client instance and
// re-exported on /metrics (telemetry.go, docs/METRICS.md): a gauge as a
// gauge, a monotonic sum as a counter whose deltas are added up. A push
// with terminating set is the client's last: its series go at once, and a
// push after it is INVALID_REQUEST.
//
// Errors, Kafka's (ClientMetricsManager), checked in this order:
// INVALID_REQUEST for a reserved client instance ID (zero, one) or a push
// after a terminating one; THROTTLING_QUOTA_EXCEEDED for a push sooner
// than the push interval after the last, unless it is the first after a
// GetTelemetrySubscriptions or it is terminating; UNKNOWN_SUBSCRIPTION_ID
// when the subscription ID is not the current one (the subscriptions
// changed: the client asks again); UNSUPPORTED_COMPRESSION_TYPE for a codec
// Kafka does not know; TELEMETRY_TOO_LARGE for a payload over
// telemetry.max.bytes as sent, or over four times it decompressed;
// INVALID_RECORD for one that does not decompress or is not OTLP
// MetricsData, which tells the client to stop pushing. Bad payloads are
// errors, never a crash (internal/telemetry's FuzzDecode).
//
// Not here: histograms, exponential histograms and summaries are accepted
// and left out of /metrics (Kafka's clients send none); there is no
// exporter plugin: /metrics is the one place pushed metrics go. Served
// and advertised only with the HTTP listener on, as
// 71_get_telemetry_subscriptions.go says. Authorization: none, as in Kafka.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/telemetry"
)

func init() {
	registerAPI(apiEntry{key: kmsg.PushTelemetry, min: 0, max: 0, needsTelemetry: true, handle: typed(handlePushTelemetry)})
}

func handlePushTelemetry(b *Broker, c *conn, req *kmsg.PushTelemetryRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	err, why := b.telemetry.Push(telemetry.Push{
		Client:         c.telemetryClient(),
		InstanceID:     telemetry.InstanceID(req.ClientInstanceID),
		SubscriptionID: req.SubscriptionID,
		Terminating:    req.Terminating,
		Compression:    req.CompressionType,
		Metrics:        req.Metrics,
	})
	if err != nil {
		resp.ErrorCode = err.Code
		c.log.Debug("PushTelemetry refused", "err", err.Message, "why", why)
	}
	return resp, nil
}
