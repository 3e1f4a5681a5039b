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

// fuzzLog is a Log whose partition 0 held loaded before the coordinator
// started; what the coordinator appends goes to the MemLog.
type fuzzLog struct {
	*MemLog
	loaded []byte
}

func (l fuzzLog) ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error {
	if partition == 0 && len(l.loaded) > 0 {
		if err := fn(l.loaded); err != nil {
			return err
		}
	}
	return l.MemLog.ReadAll(ctx, partition, fn)
}

// FuzzLoad loads a __consumer_offsets partition of arbitrary batches
// (FuzzReplay feeds single records; this walks what surrounds them:
// batches, compression, transactional offsets and their markers) and then
// serves the APIs that do not wait on what it loaded. The load may fail;
// nothing may panic.
func FuzzLoad(f *testing.F) {
	tp := model.TopicPartition{Topic: "t", Partition: 1}
	g := newClassicGroup("g")
	g.protocolType, g.protocolName, g.generation = "consumer", "range", 3
	g.add(&member{id: "m-1", instanceID: "i", protocols: []protocol{{name: "range", metadata: []byte{0, 1}}}, assignment: []byte{2}})
	t0 := [16]byte{7}
	m := &consumerMember{id: "m", subscribedTopics: []string{"t"}, epoch: 4, previousEpoch: 3, state: memberStable,
		assigned: topicPartitions{t0: {0, 1}}}
	records := []kv{
		{key: offsetKey("g", tp), value: offsetValue(committedOffset{offset: 5, expireTimestamp: -1})},
		g.metadataRecords(nil)[0],
		groupEpochRecord("cg", 4, 99),
		memberMetadataRecord("cg", m),
		targetMemberRecord("cg", "m", topicPartitions{t0: {0, 1}}),
		{key: consumerKey(consumerGroupTargetMetadataKeyType, "cg"), value: targetEpochValue(4)},
		currentAssignmentRecord("cg", m),
	}
	records = append(records, streamsFuzzRecords()...)
	now := epoch
	plain, err := buildBatch(records, nil, now, record.CodecNone)
	if err != nil {
		f.Fatal(err)
	}
	txnOffsets, err := buildBatch([]kv{{key: offsetKey("g", model.TopicPartition{Topic: "t", Partition: 2}),
		value: offsetValue(committedOffset{offset: 9, expireTimestamp: -1})}}, &txnProducer{id: 42, epoch: 1}, now, record.CodecNone)
	if err != nil {
		f.Fatal(err)
	}
	marker := func(commit bool) []byte {
		b, err := (&record.Batch{Control: true, Transactional: true, ProducerID: 42, ProducerEpoch: 1, BaseSequence: -1,
			Records: []record.Record{record.EndTxnMarker(commit, 0)}}).AppendTo(nil)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	compressed, err := (&record.Batch{Codec: record.CodecLZ4, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Records: []record.Record{{Key: records[0].key, Value: records[0].value}}}).AppendTo(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(plain)
	f.Add(append(append(append([]byte(nil), plain...), txnOffsets...), marker(true)...))
	f.Add(append(append([]byte(nil), txnOffsets...), marker(false)...))
	f.Add(append(append([]byte(nil), txnOffsets...), marker(true)...))
	f.Add(txnOffsets)
	f.Add(compressed)
	cfg := DefaultConfig()
	cfg.OffsetsTopicNumPartitions = 1
	cfg.InitialRebalanceDelay = 0
	f.Fuzz(func(t *testing.T, loaded []byte) {
		clk := clock.NewManual(epoch.Add(time.Minute))
		c := New(cfg, Deps{
			Log:             fuzzLog{MemLog: NewMemLog(), loaded: loaded},
			Clock:           clk,
			Logger:          slog.New(slog.DiscardHandler),
			TopicPartitions: func(string) ([16]byte, int32, bool) { return t0, 4, true },
			TopicNames:      func() []string { return []string{"t"} },
			TopicName:       func([16]byte) (string, bool) { return "t", true },
			TopicID:         func(string) ([16]byte, bool) { return t0, true },
		})
		defer c.Stop()
		if err := c.Load(context.Background(), 0); err != nil {
			return
		}
		serveLoaded(t, c, clk)
	})
}

// serveLoaded runs every non-blocking API over each group the coordinator
// lists, then lets time pass.
func serveLoaded(t *testing.T, c *Coordinator, clk *clock.Manual) {
	ctx := context.Background()
	lg := kmsg.NewPtrListGroupsRequest()
	lg.Version = 5
	var ids []string
	for _, g := range c.ListGroups(ctx, lg).Groups {
		ids = append(ids, g.Group)
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, ids
	described := c.DescribeGroups(ctx, dg)
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = ids
	consumers := c.ConsumerGroupDescribe(ctx, cd)
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.RequireStable = 9, true
	for _, id := range ids {
		of.Groups = append(of.Groups, kmsg.OffsetFetchRequestGroup{Group: id, MemberEpoch: -1})
	}
	c.OffsetFetch(ctx, of)
	for _, g := range described.Groups {
		for _, m := range g.Members {
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Version, hb.Group, hb.MemberID, hb.InstanceID = 4, g.Group, m.MemberID, m.InstanceID
			c.Heartbeat(ctx, hb)
			oc := kmsg.NewPtrOffsetCommitRequest()
			oc.Version, oc.Group, oc.MemberID, oc.Generation = 9, g.Group, m.MemberID, 3
			oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
			c.OffsetCommit(ctx, oc)
		}
	}
	for _, g := range consumers.Groups {
		for _, m := range g.Members {
			hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = 1, g.Group, m.MemberID, m.MemberEpoch, -1
			c.ConsumerGroupHeartbeat(ctx, hb)
		}
	}
	for pid := range int64(64) {
		c.CompleteTransaction(0, pid, 1, pid%2 == 0)
	}
	clk.Advance(time.Hour)
	c.tick()
	c.expireOffsets()
	for _, id := range ids {
		lv := kmsg.NewPtrLeaveGroupRequest()
		lv.Version, lv.Group = 5, id
		lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m-1"}}
		c.LeaveGroup(ctx, lv)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = ids
	c.DeleteGroups(ctx, del)
}
