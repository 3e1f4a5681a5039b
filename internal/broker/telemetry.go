package broker

// KIP-714 client metrics: the broker is its own telemetry receiver. What
// clients push (72_push_telemetry.go) goes to a telemetry.Store that
// /metrics re-exports, so the receiver exists when the HTTP listener does:
// Kafka advertises GetTelemetrySubscriptions and PushTelemetry only when a
// receiver is configured, and so does Samsa, only with samsa.http.listener
// set. The subscriptions are config resources of type CLIENT_METRICS in
// the metadata; each image that changes them hands the whole set to the
// telemetry.Manager (applyClientMetrics).

import (
	"net"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/telemetry"
)

// newTelemetry is the receiver of client metrics, nil without an HTTP
// listener to re-export them on.
func newTelemetry(cfg Config) *telemetry.Manager {
	if cfg.HTTPListener == "" {
		return nil
	}
	return telemetry.NewManager(telemetry.Options{
		MaxBytes: cfg.Values.Int("telemetry.max.bytes"),
		Clock:    cfg.Clock,
		Store:    telemetry.NewStore(cfg.Clock),
	})
}

// applyClientMetrics hands the image's client metrics subscriptions to the
// receiver when they changed. A subscription the controller accepted but
// this broker cannot parse (a newer broker's regex syntax) is logged and
// left out, never applied half.
func (b *Broker) applyClientMetrics(prev, img *metadata.Image) {
	if b.telemetry == nil || prev != nil && !img.ClientMetricsChanged(prev) {
		return
	}
	var subs []config.ClientMetricsSubscription
	for _, name := range img.ClientMetricsSubscriptions() {
		s, err := config.ParseClientMetrics(name, img.ClientMetricsConfig(name))
		if err != nil {
			b.log.Warn("client metrics subscription ignored", "subscription", name, "err", err)
			continue
		}
		subs = append(subs, s)
	}
	b.telemetry.SetSubscriptions(subs)
}

// telemetryClient is what match patterns test of the connection's client.
func (c *conn) telemetryClient() telemetry.Client {
	tc := telemetry.Client{ClientID: c.clientID, SoftwareName: c.softwareName, SoftwareVersion: c.softwareVersion}
	if c.nc != nil {
		if host, port, err := net.SplitHostPort(c.nc.RemoteAddr().String()); err == nil {
			tc.SourceAddress, tc.SourcePort = host, port
		}
	}
	return tc
}
