package broker

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// setClusterDefault sets a cluster-wide dynamic broker config, as
// kafka-configs.sh --entity-type brokers --entity-default does.
func setClusterDefault(t *testing.T, ctx context.Context, adm *kadm.Client, name, value string) error {
	t.Helper()
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: &value}})
	if err != nil {
		t.Fatal(err)
	}
	return rs[0].Err
}

// TestDynamicBrokerDefaultsTakeEffect: cluster-wide defaults changed
// while the broker runs apply to existing topics that do not override
// them, with no restart: log.retention.ms deletes old segments,
// message.max.bytes refuses a batch it let through before, and
// min.insync.replicas refuses acks=all writes the ISR cannot meet.
func TestDynamicBrokerDefaultsTakeEffect(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"log.retention.check.interval.ms": "50"})
	adm, ctx := adminClient(t, b)
	createTopic(t, b, "aging", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ProducerBatchMaxBytes(4<<20), kgo.RecordRetries(0),
		kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	old := time.Now().Add(-time.Hour)
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "aging", Value: []byte{byte(i)}, Timestamp: old}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	start := func() int64 {
		t.Helper()
		os, err := adm.ListStartOffsets(ctx, "aging")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := os.Lookup("aging", 0)
		return o.Offset
	}
	if got := start(); got != 0 {
		t.Fatalf("log start offset %d before the change", got)
	}

	// Retention: an hour-old log outlives a one-minute default.
	if err := setClusterDefault(t, ctx, adm, "log.retention.ms", "60000"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for start() != 5 {
		if time.Now().After(deadline) {
			t.Fatalf("log start offset %d: the old segments outlived log.retention.ms=60000", start())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// message.max.bytes: a 200 KB record fits the default 1 MB, not 100 KB.
	big := bytes.Repeat([]byte("x"), 200<<10)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "aging", Value: big}).FirstErr(); err != nil {
		t.Fatalf("200 KB under the default message.max.bytes: %v", err)
	}
	if err := setClusterDefault(t, ctx, adm, "message.max.bytes", "102400"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "aging", Value: big}).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("200 KB over message.max.bytes=102400: %v, want MESSAGE_TOO_LARGE", err)
	}
	// A topic's own max.message.bytes still wins over the default.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: ptr("1048576")}}, "aging"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "aging", Value: big}).FirstErr(); err != nil {
		t.Fatalf("200 KB under the topic's max.message.bytes: %v", err)
	}

	// min.insync.replicas: one replica cannot meet two.
	if err := setClusterDefault(t, ctx, adm, "min.insync.replicas", "2"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "aging", Value: []byte("acks=all")}).FirstErr(); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all under min.insync.replicas=2 with one replica: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if err := setClusterDefault(t, ctx, adm, "min.insync.replicas", "1"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "aging", Value: []byte("acks=all")}).FirstErr(); err != nil {
		t.Fatalf("acks=all back under min.insync.replicas=1: %v", err)
	}
}

// TestDynamicConfigsSamsaCannotApplyAreRefused: a config Kafka changes
// dynamically that Samsa reads at startup only, or does not support, is
// refused with a reason, never accepted and ignored.
func TestDynamicConfigsSamsaCannotApplyAreRefused(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	for name, value := range map[string]string{
		"log.cleaner.backoff.ms":            "100",  // read at startup
		"producer.id.expiration.ms":         "1000", // read at startup
		"log.local.retention.ms":            "1000", // not supported (tiered storage)
		"num.replica.fetchers":              "4",    // not supported
		"log.cleaner.io.buffer.load.factor": "0.5",  // not supported
	} {
		err := setClusterDefault(t, ctx, adm, name, value)
		if !errors.Is(err, kerr.InvalidConfig) && !errors.Is(err, kerr.InvalidRequest) {
			t.Errorf("%s=%s: %v, want a refusal", name, value, err)
		}
	}
	if rcs, err := adm.DescribeBrokerConfigs(ctx); err != nil || len(rcs[0].Configs) != 0 {
		t.Errorf("refused configs were stored: %v %+v", err, rcs)
	}
}

// TestDynamicNoEffectConfigsAreLogged: a config Kafka changes dynamically
// and Samsa has no use for (a thread pool's size) is accepted, as Kafka's
// tools expect, and the broker says at once that it does nothing.
func TestDynamicNoEffectConfigsAreLogged(t *testing.T) {
	var logs syncBuffer
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Logger: slogTo(&logs)})
	adm, ctx := adminClient(t, b)
	if err := setClusterDefault(t, ctx, adm, "num.io.threads", "16"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "num.io.threads=16 has no effect in Samsa") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning for num.io.threads=16:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// An unrelated change does not repeat it.
	createTopic(t, b, "unrelated", 1)
	if n := strings.Count(logs.String(), "num.io.threads=16 has no effect"); n != 1 {
		t.Errorf("warned %d times", n)
	}
}
