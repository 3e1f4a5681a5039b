package group

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer group records are Kafka's bytes: checked here by hand for
// the simplest ones, and by round trip for all.
func TestConsumerRecordBytes(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"ConsumerGroupMetadataKey", consumerKey(3, "g"), []byte{0, 3, 0, 1, 'g'}},
		{"ConsumerGroupMemberMetadataKey", consumerKey(5, "g", "m"), []byte{0, 5, 0, 1, 'g', 0, 1, 'm'}},
		// version 0, epoch 7, no tagged fields
		{"ConsumerGroupMetadataValue", groupEpochValue{epoch: 7}.encode(), []byte{0, 0, 0, 0, 0, 7, 0}},
		// ... with MetadataHash as tag 0: one field, tag 0, 8 bytes
		{"ConsumerGroupMetadataValue with hash", groupEpochValue{epoch: 7, metadataHash: 1}.encode(),
			[]byte{0, 0, 0, 0, 0, 7, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"ConsumerGroupTargetAssignmentMetadataValue", targetEpochValue(2), []byte{0, 0, 0, 0, 0, 2, 0}},
		// version 0, one topic (compact length 2): ID, partitions [1]
		// (compact length 2), its empty tags, the value's empty tags
		{"ConsumerGroupTargetAssignmentMemberValue", targetMemberValue(topicPartitions{{9}: {1}}),
			[]byte{0, 0, 2, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0}},
	}
	for _, c := range cases {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, c.got, c.want)
		}
	}
}

func TestConsumerRecordsRoundTrip(t *testing.T) {
	hash := groupEpochValue{epoch: 9, metadataHash: -5}
	if got, err := decodeGroupEpochValue(hash.encode()); err != nil || got != hash {
		t.Errorf("epoch value: %+v, %v", got, err)
	}
	mv := &memberMetadataValue{instanceID: new("i"), clientID: "c", clientHost: "/h", subscribedTopics: []string{"a", "b"},
		regex: new("x.*"), rebalanceTimeout: 3000, serverAssignor: new("range")}
	got, err := decodeMemberMetadataValue(mv.encode())
	if err != nil || *got.instanceID != "i" || got.rackID != nil || got.clientID != "c" || got.clientHost != "/h" ||
		len(got.subscribedTopics) != 2 || *got.regex != "x.*" || got.rebalanceTimeout != 3000 || *got.serverAssignor != "range" {
		t.Errorf("member value: %+v, %v", got, err)
	}
	cv := &currentAssignmentValue{epoch: 5, previousEpoch: 4, state: memberUnrevoked,
		assigned: topicPartitions{{1}: {0, 2}}, pendingRevocation: topicPartitions{{2}: {1}}}
	gotCV, err := decodeCurrentAssignmentValue(cv.encode())
	if err != nil || gotCV.epoch != 5 || gotCV.previousEpoch != 4 || gotCV.state != memberUnrevoked ||
		!gotCV.assigned.equal(cv.assigned) || !gotCV.pendingRevocation.equal(cv.pendingRevocation) {
		t.Errorf("current assignment value: %+v, %v", gotCV, err)
	}
	// Short, trailing and versioned-ahead values are refused, never a panic.
	for _, bad := range [][]byte{nil, {0}, {0, 1, 0, 0, 0, 1, 0}, append(targetEpochValue(1), 9), {0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}} {
		if _, err := decodeTargetEpochValue(bad); !errors.Is(err, errBadRecord) {
			t.Errorf("decode(%v) = %v, want errBadRecord", bad, err)
		}
	}
}

// A group ID with both classic and consumer group records (a conversion
// whose tombstones were lost) loads as the protocol written last.
func TestLoadLatestProtocolWins(t *testing.T) {
	classic := newClassicGroup("g")
	classic.protocolType, classic.generation = "consumer", 2
	classicRecord := classic.metadataRecords(nil)[0]
	consumerRecord := groupEpochRecord("g", 3, 0)
	for _, c := range []struct {
		order []kv
		want  protocolKind
	}{
		{[]kv{classicRecord, consumerRecord}, protocolConsumer},
		{[]kv{consumerRecord, classicRecord}, protocolClassic},
	} {
		log := NewMemLog()
		for _, r := range c.order {
			appendBatch(t, log, record.Batch{Records: records(r)})
		}
		co := New(Config{OffsetsTopicNumPartitions: 1}, Deps{Log: log, Clock: clock.NewManual(epoch),
			Logger: slog.New(slog.DiscardHandler)})
		if err := co.Load(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		g, _ := co.lockGroup("g", false)
		if g == nil {
			t.Fatalf("%v: group not loaded", c.want)
		}
		if g.kind != c.want {
			t.Errorf("loaded as %v, want %v", g.kind, c.want)
		}
		g.mu.Unlock()
	}
}

// ConsumerGroupHeartbeat's answer encodes with an empty assignment as an
// empty list, not null: null means "unchanged" to the member.
func TestHeartbeatAnswersEmptyAssignment(t *testing.T) {
	h := newHarness(t)
	defer h.close()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID = 1, "g", "m"
	req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 1000, []string{"nope"}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp := h.c.ConsumerGroupHeartbeat(context.Background(), req)
	if resp.ErrorCode != 0 || resp.Assignment == nil || resp.Assignment.Topics == nil {
		t.Fatalf("got %+v", resp)
	}
	var back kmsg.ConsumerGroupHeartbeatResponse
	back.Version = 1
	if err := back.ReadFrom(resp.AppendTo(nil)); err != nil || back.Assignment == nil {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}
