package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/schemaregistry"
	"github.com/samsa-io/samsa/internal/task"
)

// startRegistry runs the Schema Registry inside samsa serve when
// samsa.schema.registry.listener is set: a Kafka client of this broker's
// first PLAINTEXT listener, as it would be of any cluster. The listener
// is bound here (a port in use stops the start); the registry itself
// starts in the background. It returns a stop function; nil, nil when the
// registry is off.
func startRegistry(b *broker.Broker, values config.Values, logger *slog.Logger) (func(), error) {
	listen := values.String("samsa.schema.registry.listener")
	if listen == "" {
		return nil, nil
	}
	var seed string
	for _, l := range b.Listeners() {
		if l.SecurityProtocol == "PLAINTEXT" {
			host := l.Host
			if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
				host = "127.0.0.1"
			}
			seed = net.JoinHostPort(host, strconv.Itoa(l.Port))
			break
		}
	}
	if seed == "" {
		if _, set := values.Given(config.SourceStaticBroker)["samsa.schema.registry.listener"]; !set {
			// Only the default asked for it: a broker whose listeners are
			// all secured still starts, and says why it runs no registry.
			logger.Info("schema registry off: the broker has no PLAINTEXT listener for it to reach the cluster through; run samsa registry with the client's security flags, or set samsa.schema.registry.listener= to say so",
				"component", "schemaregistry")
			return nil, nil
		}
		return nil, fmt.Errorf("samsa.schema.registry.listener %s: the registry inside serve reaches the broker through a PLAINTEXT listener, and there is none; run samsa registry with the client's security flags instead, or set it empty", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("samsa.schema.registry.listener %s: %w", listen, err)
	}
	cfg := schemaregistry.Config{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(seed), kgo.ClientID("samsa-schema-registry")},
		Topic:      values.String("samsa.schema.registry.topic"),
		Logger:     logger,
		GroupID:    values.String("samsa.schema.registry.group.id"),
		URL:        "http://" + ln.Addr().String(),
	}
	// The start goes on in the background, retried until the cluster can
	// hold the store (a node of a cluster still forming has fewer brokers
	// than the topic's replication factor): the broker does not wait for
	// it, and the listener answers "not ready" meanwhile.
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) {
		err := schemaregistry.Run(ctx, ln, cfg, schemaregistry.RunOptions{Ready: func() {
			logger.Info("schema registry serving", "component", "schemaregistry", "listener", ln.Addr().String(), "store", seed)
		}})
		if err != nil {
			logger.Error("schema registry stopped", "component", "schemaregistry", "err", err)
		}
	})
	logger.Info("schema registry starting", "component", "schemaregistry", "listener", ln.Addr().String(), "store", seed)
	return g.Stop, nil
}
