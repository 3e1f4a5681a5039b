// Command wordcount-app runs the word count of docs/STREAMS.md against a
// Kafka cluster: it counts the words of the lines on --input and writes
// each word's new count to --output (the word as key, the count as an
// 8-byte big-endian long), until SIGTERM or SIGINT, when it commits what
// it processed, leaves the group and exits.
//
//	wordcount-app --bootstrap-server localhost:9092 --application-id wordcount \
//	    --input lines --output word-counts --state-dir /var/lib/wordcount
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
)

func main() {
	bootstrap := flag.String("bootstrap-server", "localhost:9092", "bootstrap.servers: the cluster's brokers, comma-separated")
	appID := flag.String("application-id", "wordcount", "application.id: the consumer group and the prefix of the internal topics")
	input := flag.String("input", "lines", "the topic of the lines")
	output := flag.String("output", "word-counts", "the topic of the counts")
	stateDir := flag.String("state-dir", "", "state.dir (default <tmp>/kafka-streams)")
	guarantee := flag.String("processing-guarantee", streams.AtLeastOnce, "processing.guarantee: at_least_once or exactly_once_v2")
	flag.Parse()
	props := map[string]string{
		"bootstrap.servers":    *bootstrap,
		"application.id":       *appID,
		"processing.guarantee": *guarantee,
	}
	if *stateDir != "" {
		props["state.dir"] = *stateDir
	}
	if err := run(props, *input, *output); err != nil {
		fmt.Fprintln(os.Stderr, "wordcount-app:", err)
		os.Exit(1)
	}
}

// run starts the application and waits for a signal, or for the
// application to fail.
func run(props map[string]string, input, output string) error {
	cfg, err := streams.ParseConfig(props)
	if err != nil {
		return err
	}
	topo, err := examples.WordCount(input, output)
	if err != nil {
		return err
	}
	app, err := streams.New(topo, cfg)
	if err != nil {
		return err
	}
	app.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil)))
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
