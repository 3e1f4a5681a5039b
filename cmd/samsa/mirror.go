package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/cli"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/mirror"
)

// startMirror runs the flows of samsa.mirror.config in the background once
// the broker serves; the function it returns stops them. Off when the
// config is empty.
func startMirror(b *broker.Broker, values config.Values, logger *slog.Logger) (func(), error) {
	path := values.String("samsa.mirror.config")
	if path == "" {
		return nil, nil
	}
	cfg, clients, err := cli.LoadMirrorConfig(path)
	if err != nil {
		return nil, fmt.Errorf("samsa.mirror.config: %w", err)
	}
	m, err := mirror.New(mirror.Options{Config: cfg, Clients: clients, Logger: logger.With("component", "mirror")})
	if err != nil {
		return nil, fmt.Errorf("samsa.mirror.config %s: %w", path, err)
	}
	if err := b.RegisterMetrics(cli.NewMirrorCollector(m)); err != nil {
		return nil, fmt.Errorf("samsa.mirror.config: metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Run(ctx)
	}()
	logger.Info("mirror starting", "component", "mirror", "config", path, "flows", len(cfg.Flows))
	return func() {
		cancel()
		<-done
	}, nil
}
