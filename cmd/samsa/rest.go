package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/restproxy"
	"github.com/samsa-io/samsa/internal/task"
)

// startRestProxy runs the REST Proxy inside samsa serve when
// samsa.rest.listener is set, as the Schema Registry runs: a Kafka client
// of this broker's first PLAINTEXT listener, as it would be of any
// cluster, with registryURL (the in-process registry's, "" when off) as
// its Schema Registry. The listener is bound here (a port in use stops the
// start). Users checked by a Kafka login run their requests with clients
// logged in to the broker's SASL_PLAINTEXT listener as themselves. It
// returns a stop function; nil, nil when the proxy is off.
func startRestProxy(b *broker.Broker, values config.Values, logger *slog.Logger, registryURL string) (func(), error) {
	listen := values.String("samsa.rest.listener")
	if listen == "" {
		return nil, nil
	}
	seed := plaintextSeed(b)
	if seed == "" {
		if _, set := values.Given(config.SourceStaticBroker)["samsa.rest.listener"]; !set {
			logger.Info("rest proxy off: the broker has no PLAINTEXT listener for it to reach the cluster through; run samsa rest with the client's security flags, or set samsa.rest.listener= to say so",
				"component", "restproxy")
			return nil, nil
		}
		return nil, fmt.Errorf("samsa.rest.listener %s: the REST Proxy inside serve reaches the broker through a PLAINTEXT listener, and there is none; run samsa rest with the client's security flags instead, or set it empty", listen)
	}
	cfg, err := restConfig(b, values, logger, seed, registryURL)
	if err != nil {
		return nil, err
	}
	proxy, err := restproxy.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("samsa.rest.*: %w", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		proxy.Close()
		return nil, fmt.Errorf("samsa.rest.listener %s: %w", listen, err)
	}
	scheme := "http://"
	if cfg.TLS != nil {
		scheme = "https://"
	}
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) {
		if err := proxy.Serve(ctx, ln); err != nil {
			logger.Error("rest proxy stopped", "component", "restproxy", "err", err)
		}
	})
	logger.Info("rest proxy serving", "component", "restproxy", "listener", ln.Addr().String(), "url", scheme+ln.Addr().String(),
		"cluster", seed, "schema_registry", registryURL, "authentication", values.String("samsa.rest.authentication.method"))
	return func() {
		g.Stop()
		proxy.Close()
	}, nil
}

// restConfig reads the samsa.rest.* configs.
func restConfig(b *broker.Broker, values config.Values, logger *slog.Logger, seed, registryURL string) (restproxy.Config, error) {
	serverTLS, _, err := listenerTLS(values, "samsa.rest.ssl.", "the REST Proxy")
	if err != nil {
		return restproxy.Config{}, err
	}
	auth, login, err := listenerAuth(values, "samsa.rest.authentication.", b)
	if err != nil {
		return restproxy.Config{}, err
	}
	cfg := restproxy.Config{
		ClientOpts:          []kgo.Opt{kgo.SeedBrokers(seed), kgo.ClientID("samsa-rest-proxy")},
		MaxBody:             values.Long("samsa.rest.max.request.bytes"),
		ProduceRateLimit:    values.Double("samsa.rest.produce.rate.limit.per.sec"),
		RequestRateLimit:    values.Double("samsa.rest.request.rate.limit.per.sec"),
		TLS:                 serverTLS,
		Auth:                auth,
		MaxPrincipalClients: int(values.Int("samsa.rest.principal.clients.max")),
		PrincipalClientIdle: time.Duration(values.Long("samsa.rest.principal.clients.idle.ms")) * time.Millisecond,
		SchemaRegistryURL:   registryURL,
		Logger:              logger,
	}
	if login != nil {
		cfg.PrincipalMechanism = values.String("samsa.rest.authentication.kafka.sasl.mechanism")
		cfg.PrincipalClientOpts = []kgo.Opt{kgo.SeedBrokers(loopback(*login)), kgo.ClientID("samsa-rest-proxy")}
	} else if values.IsSet("samsa.rest.principal.clients.max") || values.IsSet("samsa.rest.principal.clients.idle.ms") {
		return restproxy.Config{}, fmt.Errorf("samsa.rest.principal.clients.* are set but no REST user logs in to the cluster: they need samsa.rest.authentication.kafka.sasl.mechanism")
	}
	return cfg, nil
}
