package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A deleted topic is gone for every API, by name and by ID; recreated
// under the same name it has a new ID, starts at offset 0 and holds none
// of the old records, also after a restart.
func TestE2EDeleteAndRecreate(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	const topic = "phoenix"
	old := createTopic(t, b, topic, 2)
	baseMs := time.Now().Add(-time.Minute).UnixMilli()
	oldRecs := makeRecords("old", 40, 2, baseMs)
	familyByName(t, "franz").produce(t, b.Addr(), topic, "gzip", -1, oldRecs)
	checkStored(t, b, topic, 2, "gzip", oldRecs)

	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	deleted, err := adm.DeleteTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if err := deleted.Error(); err != nil {
		t.Fatalf("delete: %v", err)
	}

	rc := dialRaw(t, b)
	unknown := kerr.UnknownTopicOrPartition.Code
	if mt := rawMetadataTopic(rc, topic, 1); mt.ErrorCode != unknown {
		t.Errorf("metadata after delete: error %d, want %d", mt.ErrorCode, unknown)
	}
	byID := kmsg.NewPtrMetadataRequest()
	byID.Version = 12
	byID.Topics = []kmsg.MetadataRequestTopic{{TopicID: old.ID}}
	if resp := rc.roundTrip(byID, 2).(*kmsg.MetadataResponse); len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("metadata by old ID after delete: %+v, want UNKNOWN_TOPIC_ID", resp.Topics)
	}
	if sp := rawProducePart(rc, rawProduceReq(topic, 0, 1, rawBatch(rawBatchOptions{timestamp: baseMs}, rawRecord{Value: []byte("x")})), 3); sp.ErrorCode != unknown {
		t.Errorf("produce after delete: error %d, want %d", sp.ErrorCode, unknown)
	}
	if fp := rawFetchPart(rc, rawFetchReq(12, topic, [16]byte{}, 0, 0), 4); fp.ErrorCode != unknown {
		t.Errorf("fetch after delete: error %d, want %d", fp.ErrorCode, unknown)
	}
	if fp := rawFetchPart(rc, rawFetchReq(13, "", old.ID, 0, 0), 5); fp.ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("fetch by old ID after delete: error %d, want UNKNOWN_TOPIC_ID", fp.ErrorCode)
	}
	if lp := rawListOffsetsPart(rc, rawListOffsetsReq(topic, 0, -1), 6); lp.ErrorCode != unknown {
		t.Errorf("list offsets after delete: error %d, want %d", lp.ErrorCode, unknown)
	}
	if mt := rawMetadataTopic(rc, topic, 7); mt.ErrorCode != unknown {
		t.Errorf("metadata after a produce and fetch to the deleted topic: error %d, want %d (recreated?)", mt.ErrorCode, unknown)
	}

	recreated := createTopic(t, b, topic, 3)
	if recreated.ID == old.ID {
		t.Fatalf("recreated topic kept ID %x", old.ID)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		s, _ := starts.Lookup(topic, p)
		e, _ := ends.Lookup(topic, p)
		if s.Err != nil || e.Err != nil || s.Offset != 0 || e.Offset != 0 {
			t.Errorf("recreated partition %d: offsets %d..%d (%v, %v), want 0..0", p, s.Offset, e.Offset, s.Err, e.Err)
		}
	}
	if fp := rawFetchPart(rc, rawFetchReq(13, "", old.ID, 0, 0), 8); fp.ErrorCode != kerr.UnknownTopicID.Code {
		t.Errorf("fetch by old ID after recreate: error %d, want UNKNOWN_TOPIC_ID", fp.ErrorCode)
	}
	newRecs := makeRecords("new", 12, 3, baseMs+1000)
	familyByName(t, "sarama").produce(t, b.Addr(), topic, "lz4", -1, newRecs)
	checkStored(t, b, topic, 3, "lz4", newRecs)
	got := familyByName(t, "kafkago").consume(t, b.Addr(), topic, perPartition(newRecs), nil)
	checkConsumed(t, newRecs, got, zeroOffsets(), false)

	b = restartBroker(t, b, dir)
	if id := topicID(t, b, topic); id != recreated.ID {
		t.Errorf("topic ID after restart %x, want %x", id, recreated.ID)
	}
	checkStored(t, b, topic, 3, "lz4", newRecs)
}
