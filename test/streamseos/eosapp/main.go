// Command eosapp is the stream application the exactly-once test kills:
// it counts the records of each key of eos-in and writes every new count to
// eos-out, under exactly_once_v2, until SIGTERM (a graceful close) or
// SIGKILL (the test's crash).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/streams"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "bootstrap server")
	appID := flag.String("app", "eos-count", "application.id")
	stateDir := flag.String("state", "", "state.dir")
	guarantee := flag.String("guarantee", streams.ExactlyOnceV2, "processing.guarantee")
	flag.Parse()
	if err := run(*bootstrap, *appID, *stateDir, *guarantee); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(bootstrap, appID, stateDir, guarantee string) error {
	b := streams.NewBuilder()
	in := streams.From[string, string](b, []string{"eos-in"})
	in.GroupByKey().Count(streams.Materialized[string, int64]{StoreName: "counts"}).ToStream().To("eos-out")
	topo, err := b.Build()
	if err != nil {
		return err
	}
	zero := int64(0)
	app, err := streams.New(topo, streams.Config{ApplicationID: appID, BootstrapServers: []string{bootstrap},
		ProcessingGuarantee: guarantee, StateDir: stateDir, CacheMaxBytes: &zero, CommitInterval: 100 * time.Millisecond,
		// A killed instance's member leaves the group when its session
		// times out; a short one keeps the test's rebalances short.
		ClientOptions: []kgo.Opt{kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(time.Second)}})
	if err != nil {
		return err
	}
	app.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := app.Start(ctx); err != nil {
		return err
	}
	fmt.Println("started")
	select {
	case <-ctx.Done():
	case <-app.Done():
	}
	return app.Close()
}
