package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/console"
	"github.com/samsa-io/samsa/internal/task"
)

// startConsole runs the web console inside samsa serve when
// samsa.console.listener is set: a Kafka client of this broker's first
// PLAINTEXT listener (its first SASL_PLAINTEXT listener when users log
// in, each session as its user), showing the in-process registry and
// Connect worker (URLs "" when off) and this broker's admin listener
// (the balancer). The default listener taken by something else, or no
// listener to reach the broker through, turns the console off with a
// warning; a listener the operator set stops the start instead. It
// returns a stop function; nil, nil when the console is off.
func startConsole(b *broker.Broker, values config.Values, logger *slog.Logger, registryURL, connectURL string) (func(), error) {
	listen := values.String("samsa.console.listener")
	if listen == "" {
		return nil, consoleOffSettings(values)
	}
	_, explicit := values.Given(config.SourceStaticBroker)["samsa.console.listener"]
	offOrFail := func(err error) (func(), error) {
		if explicit {
			return nil, fmt.Errorf("samsa.console.listener %s: %w", listen, err)
		}
		logger.Warn("console off: "+err.Error()+"; set samsa.console.listener to another host:port, or empty to say so",
			"component", "console", "listener", listen)
		return nil, nil
	}
	mechanism := values.String("samsa.console.authentication.kafka.sasl.mechanism")
	var seed string
	if mechanism != "" {
		l, err := saslListener(values, b, mechanism)
		if err != nil {
			return nil, fmt.Errorf("samsa.console.authentication.kafka.sasl.mechanism: %w", err)
		}
		seed = loopback(l)
	} else if seed = plaintextSeed(b); seed == "" {
		return offOrFail(errors.New("the broker has no PLAINTEXT listener for the console to reach the cluster through (set samsa.console.authentication.kafka.sasl.mechanism to log users in through a SASL_PLAINTEXT one, or run samsa console with the client's security flags)"))
	}
	serverTLS, _, err := listenerTLS(values, "samsa.console.ssl.", "the console")
	if err != nil {
		return nil, err
	}
	cfg := console.Config{
		ClientOpts:     []kgo.Opt{kgo.SeedBrokers(seed)},
		LoginMechanism: mechanism,
		RegistryURL:    registryURL,
		ConnectURL:     connectURL,
		PageSize:       int(values.Int("samsa.console.page.size")),
		SampleInterval: time.Duration(values.Long("samsa.console.sample.interval.ms")) * time.Millisecond,
		SecureCookies:  serverTLS != nil,
		Logger:         logger,
	}
	if addr := b.HTTPAddr(); addr != "" {
		cfg.AdminURLs = []string{"http://" + addr}
	}
	c, err := console.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		c.Close()
		if errors.Is(err, syscall.EADDRINUSE) {
			return offOrFail(err)
		}
		return nil, fmt.Errorf("samsa.console.listener %s: %w", listen, err)
	}
	scheme := "http://"
	if serverTLS != nil {
		ln = tls.NewListener(ln, serverTLS)
		scheme = "https://"
	}
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) {
		if err := c.Serve(ctx, ln); err != nil {
			logger.Error("console stopped", "component", "console", "err", err)
		}
	})
	logger.Info("console serving", "component", "console", "listener", ln.Addr().String(), "url", scheme+ln.Addr().String(),
		"cluster", seed, "login", mechanism, "schema_registry", registryURL, "connect", connectURL)
	return func() {
		g.Stop()
		c.Close()
	}, nil
}

// consoleOffSettings refuses console settings given while the console is
// off: nothing configured is silently ignored.
func consoleOffSettings(values config.Values) error {
	for name := range values.Given(config.SourceStaticBroker) {
		if len(name) > len("samsa.console.") && name[:len("samsa.console.")] == "samsa.console." && name != "samsa.console.listener" {
			return fmt.Errorf("%s is set but samsa.console.listener is empty: the console is off", name)
		}
	}
	return nil
}
