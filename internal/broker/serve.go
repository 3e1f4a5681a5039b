package broker

import (
	"errors"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/config"
)

// Samsa's defaults where they differ from Kafka's: a single node that
// runs with no configuration at all, reachable only from this machine,
// with its data beside the working directory.
var samsaDefaults = map[string]string{
	"listeners":     "PLAINTEXT://127.0.0.1:9092",
	"log.dirs":      "./samsa-data",
	"node.id":       "1",
	"process.roles": "broker,controller",
	// Kafka's 3 replicas for its internal topics cannot be met by one
	// node. A node of a quorum keeps Kafka's defaults (singleNodeOnly).
	"offsets.topic.replication.factor":                 "1",
	"transaction.state.log.replication.factor":         "1",
	"transaction.state.log.min.isr":                    "1",
	"share.coordinator.state.topic.replication.factor": "1",
	"share.coordinator.state.topic.min.isr":            "1",
	// Kafka's 100 KiB socket buffers predate TCP buffer autotuning, which
	// setting a size turns off; Samsa keeps the OS's unless asked.
	"socket.send.buffer.bytes":    "-1",
	"socket.receive.buffer.bytes": "-1",
}

// singleNodeOnly are the defaults of samsaDefaults that only suit a node
// alone: a node configured into a quorum (controller.quorum.voters or
// controller.quorum.bootstrap.servers) gets Kafka's, so the coordinators'
// topics are replicated 3 times with min ISR 2 unless the operator says
// otherwise, and their creation fails with a clear error while fewer than
// 3 brokers are up.
var singleNodeOnly = []string{"offsets.topic.replication.factor", "transaction.state.log.replication.factor",
	"transaction.state.log.min.isr", "share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr"}

// LoadConfig resolves the broker's config the way `samsa serve` takes it:
// Samsa's defaults, then server.properties (if path is not empty), then
// overrides (flags), each validated against Kafka's broker catalog.
func LoadConfig(path string, overrides map[string]string) (config.Values, error) {
	raw, given := map[string]string{}, map[string]bool{}
	for k, v := range samsaDefaults {
		raw[k] = v
	}
	if path != "" {
		fromFile, err := config.LoadBrokerProperties(path, nil)
		if err != nil {
			return config.Values{}, err
		}
		for k, v := range fromFile.Given(config.SourceStaticBroker) {
			raw[k] = v
			given[k] = true
		}
	}
	for k, v := range overrides {
		raw[k] = v
		given[k] = true
	}
	if raw["controller.quorum.voters"] != "" || raw["controller.quorum.bootstrap.servers"] != "" {
		for _, k := range singleNodeOnly {
			if !given[k] {
				delete(raw, k)
			}
		}
	}
	return config.Parse(config.Broker, raw)
}

// ConfigFromValues builds the broker's Config from resolved values.
func ConfigFromValues(v config.Values) (Config, error) {
	listeners, err := ParseListeners(v.String("listeners"))
	if err != nil {
		return Config{}, err
	}
	var advertised []Listener
	if !v.IsNull("advertised.listeners") && v.String("advertised.listeners") != "" {
		if advertised, err = ParseListeners(v.String("advertised.listeners")); err != nil {
			return Config{}, err
		}
		for _, a := range advertised {
			if a.Host != "" && isWildcardHost(a.Host) {
				return Config{}, fmt.Errorf("broker: advertised.listeners cannot use the nonroutable meta-address %s (%s): use an address clients can reach", a.Host, a)
			}
		}
	}
	dirs := v.LogDirs()
	if len(dirs) == 0 {
		return Config{}, errors.New("broker: log.dirs is empty")
	}
	if err := checkLogDirs(dirs); err != nil {
		return Config{}, err
	}
	node := v.Int("node.id")
	if node < 0 {
		return Config{}, errors.New("broker: node.id must be set (>= 0)")
	}
	return Config{
		NodeID:                node,
		Listeners:             listeners,
		AdvertisedListeners:   advertised,
		LogDirs:               dirs,
		LogDir:                dirs[0],
		SocketRequestMaxBytes: v.Int("socket.request.max.bytes"),
		ConnectionsMaxIdle:    time.Duration(v.Long("connections.max.idle.ms")) * time.Millisecond,
		HTTPListener:          v.String("samsa.http.listener"),
		Values:                v,
	}, nil
}
