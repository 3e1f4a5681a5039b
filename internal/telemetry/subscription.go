package telemetry

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/config"
)

// InstanceID is a client instance ID (KIP-714): a UUID the broker hands a
// client on its first GetTelemetrySubscriptions, which the client keeps
// for its life.
type InstanceID [16]byte

// String is the ID as Kafka writes a Uuid: URL-safe base64 without padding.
func (id InstanceID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// reserved reports whether the ID is one Kafka never hands out (its
// Uuid.RESERVED: zero, one, and the metadata topic's ID, which is one
// too), and refuses in a push.
func (id InstanceID) reserved() bool {
	var zero, one InstanceID
	one[15] = 1
	return id == zero || id == one
}

// Client is what the broker knows of the client behind a request: the
// attributes match patterns test, besides the instance ID. An empty
// software name or version is one the client did not send (ApiVersions
// before v3), which no pattern matches, as Kafka's null.
type Client struct {
	ClientID        string
	SoftwareName    string
	SoftwareVersion string
	SourceAddress   string
	SourcePort      string
}

// attribute is one match attribute's value; false when the client has none.
func (c Client) attribute(id InstanceID, name string) (string, bool) {
	switch name {
	case "client_instance_id":
		return id.String(), true
	case "client_id":
		return c.ClientID, true
	case "client_software_name":
		return c.SoftwareName, c.SoftwareName != ""
	case "client_software_version":
		return c.SoftwareVersion, c.SoftwareVersion != ""
	case "client_source_address":
		return c.SourceAddress, c.SourceAddress != ""
	case "client_source_port":
		return c.SourcePort, c.SourcePort != ""
	}
	return "", false
}

// matches reports whether a client matches every pattern of a
// subscription; one without patterns matches every client.
func matches(s config.ClientMetricsSubscription, id InstanceID, c Client) bool {
	for _, m := range s.Match {
		v, ok := c.attribute(id, m.Attribute)
		if !ok || !m.Matches(v) {
			return false
		}
	}
	return true
}

// Subscribed is what the subscriptions a client matches ask of it.
type Subscribed struct {
	// Metrics are the metric name prefixes to push, sorted and each once:
	// config.AllClientMetrics alone when a subscription asks for every
	// metric, none when none matches.
	Metrics []string
	// IntervalMs is the shortest interval of the matching subscriptions,
	// Kafka's default (five minutes) when none matches.
	IntervalMs int32
}

// DefaultIntervalMs is the push interval of a client no subscription
// matches, Kafka's interval.ms default.
const DefaultIntervalMs = 300000

// subscribe merges the subscriptions a client matches, as Kafka's
// ClientMetricsManager.createClientInstance does.
func subscribe(subs []config.ClientMetricsSubscription, id InstanceID, c Client) Subscribed {
	out := Subscribed{IntervalMs: DefaultIntervalMs}
	all := false
	for _, s := range subs {
		if !matches(s, id, c) {
			continue
		}
		all = all || slices.Contains(s.Metrics, config.AllClientMetrics)
		out.Metrics = append(out.Metrics, s.Metrics...)
		out.IntervalMs = min(out.IntervalMs, s.IntervalMs)
	}
	if all {
		out.Metrics = []string{config.AllClientMetrics}
	}
	slices.Sort(out.Metrics)
	out.Metrics = slices.Compact(out.Metrics)
	return out
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SubscriptionID identifies what a client is subscribed to, as Kafka's
// computeSubscriptionId: a CRC32C of the metrics and the interval, XORed
// with the instance ID's hash (Java's Uuid.hashCode). It depends on the
// content only, so any broker computes the same ID for the same
// subscriptions, and it changes when they do.
func SubscriptionID(s Subscribed, id InstanceID) int32 {
	text := "[" + strings.Join(s.Metrics, ", ") + "]" + strconv.Itoa(int(s.IntervalMs))
	crc := int32(crc32.Checksum([]byte(text), castagnoli))
	x := binary.BigEndian.Uint64(id[:8]) ^ binary.BigEndian.Uint64(id[8:])
	return crc ^ int32(uint32(x^(x>>32)))
}
