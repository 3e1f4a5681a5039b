package controller

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

var verbose = flag.Bool("controller.log", false, "print controller and raft logs")

func testLogger() *slog.Logger {
	if *verbose {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func testConfig(dir string) Config {
	return Config{
		NodeID: 1,
		Dir:    dir,
		Endpoints: []metadata.Endpoint{
			{Name: "PLAINTEXT", Host: "localhost", Port: 9092, SecurityProtocol: "PLAINTEXT"},
		},
		Logger: testLogger(),
	}
}

// open starts a controller on dir and closes it when the test ends.
func open(t testing.TB, cfg Config) *Controller {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func brokerValues(t testing.TB, raw map[string]string) config.Values {
	t.Helper()
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// registerBrokers adds registrations for more brokers, as a multi-node
// cluster would have, so replication factors above 1 can be tested.
func registerBrokers(t testing.TB, c *Controller, ids ...model.NodeID) {
	t.Helper()
	var recs []metadata.Record
	for _, id := range ids {
		recs = append(recs, metadata.BrokerRegistration{NodeID: id, Incarnation: "x"})
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.proposeLocked(ctx(t), recs); err != nil {
		t.Fatal(err)
	}
}

func createOne(t testing.TB, c *Controller, tc CreateTopic) CreateTopicResult {
	t.Helper()
	res := c.CreateTopics(ctx(t), []CreateTopic{tc}, false)
	if len(res) != 1 {
		t.Fatalf("%d results", len(res))
	}
	return res[0]
}

func mustCreate(t testing.TB, c *Controller, name string, partitions int32) CreateTopicResult {
	t.Helper()
	res := createOne(t, c, CreateTopic{Name: name, NumPartitions: partitions, ReplicationFactor: -1})
	if res.ErrorCode != 0 {
		t.Fatalf("create %s: %d %s", name, res.ErrorCode, res.ErrorMessage)
	}
	return res
}

func sp(s string) *string { return &s }
