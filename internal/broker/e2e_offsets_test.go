package broker

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// offsetsFixture fills partition 0 of a two-partition topic with 50
// records in five batches; record i has timestamp base+10i except record
// 43, the largest, at base+10000. Partition 1 stays empty.
func offsetsFixture(t *testing.T, b *Broker, topic string) (baseMs int64) {
	t.Helper()
	createTopic(t, b, topic, 2)
	baseMs = time.Now().Add(-time.Hour).UnixMilli()
	cl := newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	for batch := range 5 {
		var krs []*kgo.Record
		for i := batch * 10; i < batch*10+10; i++ {
			ts := baseMs + int64(i)*10
			if i == 43 {
				ts = baseMs + 10000
			}
			krs = append(krs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte{byte(i)}, Timestamp: time.UnixMilli(ts)})
		}
		if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return baseMs
}

// ListOffsets resolves earliest, latest, max timestamp and timestamps to
// Kafka's answers: the first offset whose timestamp is >= the one asked,
// which need not be the first offset after the records before it in time.
func TestE2EListOffsetsByTime(t *testing.T) {
	b := startBroker(t)
	const topic = "by-time"
	base := offsetsFixture(t, b, topic)
	checkListOffsets(t, b, topic, base)
}

func checkListOffsets(t *testing.T, b *Broker, topic string, base int64) {
	t.Helper()
	rc := dialRaw(t, b)
	cases := []struct {
		name       string
		p          int32
		ts         int64
		wantOffset int64
		wantTs     int64
	}{
		{"earliest", 0, -2, 0, -1},
		{"latest", 0, -1, 50, -1},
		{"max timestamp", 0, -3, 43, base + 10000},
		{"time zero", 0, 0, 0, base},
		{"first record's time", 0, base, 0, base},
		{"between records", 0, base + 105, 11, base + 110},
		{"exact record time", 0, base + 110, 11, base + 110},
		{"later records are older than the max", 0, base + 425, 43, base + 10000},
		{"the max itself", 0, base + 10000, 43, base + 10000},
		{"past every timestamp", 0, base + 10001, -1, -1},
		{"empty earliest", 1, -2, 0, -1},
		{"empty latest", 1, -1, 0, -1},
		{"empty max timestamp", 1, -3, -1, -1},
		{"empty by time", 1, base, -1, -1},
	}
	for i, c := range cases {
		got := rawListOffsetsPart(rc, rawListOffsetsReq(topic, c.p, c.ts), int32(i))
		if got.ErrorCode != 0 || got.Offset != c.wantOffset || got.Timestamp != c.wantTs {
			t.Errorf("%s (partition %d, timestamp %d): error %d offset %d timestamp %d, want offset %d timestamp %d",
				c.name, c.p, c.ts, got.ErrorCode, got.Offset, got.Timestamp, c.wantOffset, c.wantTs)
		}
		if got.Offset >= 0 && got.LeaderEpoch < 0 {
			t.Errorf("%s: leader epoch %d for offset %d", c.name, got.LeaderEpoch, got.Offset)
		}
	}

	// The same questions through each client's own API.
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	after, err := adm.ListOffsetsAfterMilli(ctx, base+105, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := after.Lookup(topic, 0); o.Err != nil || o.Offset != 11 {
		t.Errorf("kadm after %d: offset %d (%v), want 11", base+105, o.Offset, o.Err)
	}
	maxTs, err := adm.ListMaxTimestampOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := maxTs.Lookup(topic, 0); o.Err != nil || o.Offset != 43 || o.Timestamp != base+10000 {
		t.Errorf("kadm max timestamp: offset %d timestamp %d (%v), want 43 at %d", o.Offset, o.Timestamp, o.Err, base+10000)
	}

	sc, err := sarama.NewClient([]string{b.Addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for ts, want := range map[int64]int64{sarama.OffsetOldest: 0, sarama.OffsetNewest: 50, base + 425: 43, base + 10001: -1} {
		if got, err := sc.GetOffset(topic, 0, ts); err != nil || got != want {
			t.Errorf("sarama GetOffset(%d): %d %v, want %d", ts, got, err, want)
		}
	}

	conn, err := kafka.DialLeader(ctx, "tcp", b.Addr(), topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got, err := conn.ReadOffset(time.UnixMilli(base + 105)); err != nil || got != 11 {
		t.Errorf("kafka-go ReadOffset(%d): %d %v, want 11", base+105, got, err)
	}
	if first, last, err := conn.ReadOffsets(); err != nil || first != 0 || last != 50 {
		t.Errorf("kafka-go ReadOffsets: %d %d %v, want 0 50", first, last, err)
	}
}
