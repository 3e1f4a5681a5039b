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
// first PLAINTEXT listener, as it would be of any cluster. It returns the
// registry (which the broker's schema ID validation asks) and a stop
// function; nil, nil, nil when the registry is off.
func startRegistry(ctx context.Context, b *broker.Broker, values config.Values, logger *slog.Logger) (*schemaregistry.Registry, func(), error) {
	listen := values.String("samsa.schema.registry.listener")
	if listen == "" {
		return nil, nil, nil
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
		return nil, nil, fmt.Errorf("samsa.schema.registry.listener %s: the registry inside serve reaches the broker through a PLAINTEXT listener, and there is none; run samsa registry with the client's security flags instead, or set it empty", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, fmt.Errorf("samsa.schema.registry.listener %s: %w", listen, err)
	}
	reg, err := schemaregistry.New(schemaregistry.Config{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(seed), kgo.ClientID("samsa-schema-registry")},
		Topic:      values.String("samsa.schema.registry.topic"),
		Logger:     logger,
		GroupID:    values.String("samsa.schema.registry.group.id"),
		URL:        "http://" + ln.Addr().String(),
	})
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	if err := reg.Start(ctx); err != nil {
		reg.Close()
		ln.Close()
		return nil, nil, fmt.Errorf("schema registry: %w", err)
	}
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) {
		if err := reg.Serve(ctx, ln); err != nil {
			logger.Error("schema registry stopped", "component", "schemaregistry", "err", err)
		}
	})
	logger.Info("schema registry serving", "component", "schemaregistry", "listener", ln.Addr().String(), "store", seed)
	return reg, func() {
		g.Stop()
		reg.Close()
	}, nil
}
