package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// restartBroker closes b cleanly and starts a new broker on its log
// directory (on a new port).
func restartBroker(t *testing.T, b *Broker, dir string) *Broker {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return startBrokerWith(t, Config{LogDir: dir})
}

// topicID asks the broker for a topic's ID.
func topicID(t *testing.T, b *Broker, topic string) [16]byte {
	t.Helper()
	mt := rawMetadataTopic(dialRaw(t, b), topic, 1)
	if mt.ErrorCode != 0 {
		t.Fatalf("metadata %s: error %d", topic, mt.ErrorCode)
	}
	return mt.TopicID
}

// Data produced by two clients with two codecs survives a clean restart
// byte for byte, every client reads it all again, ListOffsets by time
// still finds the same offsets, and new records continue the offsets;
// after a second restart both generations are there.
func TestE2ERestart(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	const topic = "durable"
	created := createTopic(t, b, topic, 3)
	baseMs := time.Now().Add(-time.Minute).UnixMilli()
	before := makeRecords("before", 90, 3, baseMs)
	familyByName(t, "franz").produce(t, b.Addr(), topic, "zstd", -1, before[:45])
	familyByName(t, "sarama").produce(t, b.Addr(), topic, "snappy", 1, before[45:])
	const timesTopic = "durable-times"
	timesBase := offsetsFixture(t, b, timesTopic)

	b = restartBroker(t, b, dir)
	if id := topicID(t, b, topic); id != created.ID {
		t.Errorf("topic ID after restart %x, want %x", id, created.ID)
	}
	checkStored(t, b, topic, 3, "", before)
	for _, fam := range e2eFamilies {
		got := fam.consume(t, b.Addr(), topic, perPartition(before), nil)
		checkConsumed(t, before, got, zeroOffsets(), fam.nullAware)
	}
	checkListOffsets(t, b, timesTopic, timesBase)

	// New records continue each partition's offsets.
	after := makeRecords("after", 30, 3, baseMs+60_000)
	familyByName(t, "kafkago").produce(t, b.Addr(), topic, "lz4", -1, after)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	ends, err := kadm.NewClient(newFranz(t, b.Addr())).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != 40 {
			t.Errorf("partition %d: end offset %d (%v), want 40", o.Partition, o.Offset, o.Err)
		}
	})
	from := map[int32]int64{0: 30, 1: 30, 2: 30}
	checkConsumed(t, after, familyByName(t, "franz").consume(t, b.Addr(), topic, perPartition(after), from), from, true)

	b = restartBroker(t, b, dir)
	checkStored(t, b, topic, 3, "", append(before, after...))
}
