package group

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func offsetRecord(group, topic string, partition int32, offset int64) kv {
	tp := model.TopicPartition{Topic: topic, Partition: partition}
	return kv{key: offsetKey(group, tp), value: offsetValue(committedOffset{offset: offset, leaderEpoch: 3, expireTimestamp: -1})}
}

func appendBatch(t *testing.T, log *MemLog, b record.Batch) {
	t.Helper()
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = record.NoProducerID, record.NoProducerEpoch, record.NoSequence
	raw, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
}

func records(kvs ...kv) []record.Record {
	out := make([]record.Record, len(kvs))
	for i, r := range kvs {
		out[i] = record.Record{Offset: int64(i), Key: r.key, Value: r.value}
	}
	return out
}

// Load reads what Kafka may have written too (compressed batches, v0
// keys, v1 values) and skips, without failing, what it cannot use:
// undecodable records (here a KIP-848 group epoch record cut short) and
// control records that are not transaction markers. A transactional batch
// without its marker stays pending.
func TestLoadSkipsWhatItCannotRead(t *testing.T) {
	log := NewMemLog()
	appendBatch(t, log, record.Batch{Records: records(offsetRecord("g", "t", 0, 10))})
	appendBatch(t, log, record.Batch{Codec: record.CodecGzip, Records: records(offsetRecord("g", "t", 1, 11))})

	v0key := (&kmsg.OffsetCommitKey{Version: 0, Group: "g", Topic: "t", Partition: 2}).AppendTo(nil)
	v1value := kmsg.NewOffsetCommitValue()
	v1value.Version, v1value.Offset, v1value.ExpireTimestamp = 1, 12, 99
	appendBatch(t, log, record.Batch{Records: records(kv{key: v0key, value: v1value.AppendTo(nil)})})

	consumerGroupKey := []byte{0, 3, 0, 1, 'g'} // KIP-848 ConsumerGroupMetadataKey
	appendBatch(t, log, record.Batch{Records: records(
		kv{key: consumerGroupKey, value: []byte{0, 0}},
		kv{key: []byte{0}, value: []byte("short key")},
		kv{key: offsetKey("g", model.TopicPartition{Topic: "t", Partition: 3}), value: []byte{0, 3, 1}},
	)})
	appendBatch(t, log, record.Batch{Control: true, Records: []record.Record{{Key: []byte{0, 0, 0, 2}}}})
	appendBatch(t, log, record.Batch{Transactional: true, Records: records(offsetRecord("g", "t", 4, 14))})

	c := New(Config{OffsetsTopicNumPartitions: 1}, Deps{Log: log, Clock: clock.NewManual(epoch),
		Logger: slog.New(slog.DiscardHandler)})
	if err := c.Load(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	g, _ := c.lockGroup("g", false)
	if g == nil {
		t.Fatal("group g not loaded")
	}
	defer g.mu.Unlock()
	want := map[int32]committedOffset{
		0: {offset: 10, leaderEpoch: 3, expireTimestamp: -1},
		1: {offset: 11, leaderEpoch: 3, expireTimestamp: -1},
		2: {offset: 12, leaderEpoch: -1, expireTimestamp: 99},
	}
	if len(g.offsets) != len(want) {
		t.Errorf("loaded %d offsets, want %d: %+v", len(g.offsets), len(want), g.offsets)
	}
	for p, o := range want {
		if got := g.offsets[model.TopicPartition{Topic: "t", Partition: p}]; got != o {
			t.Errorf("t-%d = %+v, want %+v", p, got, o)
		}
	}
	if !g.hasPending(model.TopicPartition{Topic: "t", Partition: 4}) {
		t.Errorf("t-4 not pending: %+v", g.pending)
	}
}

// FuzzReplay feeds arbitrary records to the loader, which must never panic
// on what it finds in __consumer_offsets.
func FuzzReplay(f *testing.F) {
	tp := model.TopicPartition{Topic: "t", Partition: 1}
	f.Add(offsetKey("g", tp), offsetValue(committedOffset{offset: 5, expireTimestamp: -1}))
	f.Add(offsetKey("g", tp), []byte(nil))
	g := newClassicGroup("g")
	g.protocolType, g.protocolName, g.generation = "consumer", "range", 3
	g.add(&member{id: "m-1", instanceID: "i", protocols: []protocol{{name: "range", metadata: []byte{0, 1}}}, assignment: []byte{2}})
	md := g.metadataRecords(nil)[0]
	f.Add(md.key, md.value)
	f.Add(md.key, []byte(nil))
	f.Add([]byte{0}, []byte{1})
	f.Add([]byte{0, 9, 0, 1, 'x'}, []byte{0, 0})
	t0 := [16]byte{7}
	m := &consumerMember{id: "m", instanceID: "i", subscribedTopics: []string{"t"}, regex: "t.*", epoch: 4,
		previousEpoch: 3, state: memberUnrevoked, assigned: topicPartitions{t0: {0, 1}},
		pendingRevocation: topicPartitions{t0: {2}}}
	for _, r := range []kv{
		groupEpochRecord("g", 4, 99),
		memberMetadataRecord("g", m),
		targetMemberRecord("g", "m", topicPartitions{t0: {0, 1, 3}}),
		{key: consumerKey(consumerGroupTargetMetadataKeyType, "g"), value: targetEpochValue(4)},
		currentAssignmentRecord("g", m),
	} {
		f.Add(r.key, r.value)
		f.Add(r.key, []byte(nil))
	}
	for _, r := range streamsFuzzRecords() {
		f.Add(r.key, r.value)
		f.Add(r.key, []byte(nil))
	}
	cfg := DefaultConfig()
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := newReplay()
		r.apply(groupEpochRecord("g", 1, 0).key, groupEpochRecord("g", 1, 0).value)
		r.apply(key, value)
		r.apply(key, value)
		for _, g := range r.groups(0, epoch, &cfg) {
			s := &step{now: epoch.Add(time.Hour), cfg: &cfg, log: slog.New(slog.DiscardHandler), stats: new(stats)}
			g.classic.tick(s)
			g.consumer.tick(s)
			g.consumer.stateName()
		}
	})
}
