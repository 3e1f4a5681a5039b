package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
)

// Mirror topics (mirror_append.go, docs/DESIGN-mirror-topics.md).

// srcBatch is a batch as the mirror sends it: records at the source's
// offsets (holes allowed, as compaction leaves them), a key, a value and a
// header each, the source's leader epoch 42, no producer state.
type srcBatch struct {
	codec         record.Codec
	logAppendTime int64 // > 0: the source stamped the batch with this time
	// What a mirror must not send.
	producer, transactional, control bool
}

const srcTimestamp = 1_600_000_000_000

func (o srcBatch) build(t testing.TB, offsets ...int64) []byte {
	t.Helper()
	b := record.Batch{BaseOffset: offsets[0], PartitionLeaderEpoch: 42, Codec: o.codec,
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Transactional: o.transactional, Control: o.control}
	if o.producer || o.transactional {
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = 7, 0, 0
	}
	for _, off := range offsets {
		r := record.Record{Offset: off, Timestamp: srcTimestamp + off, Key: fmt.Appendf(nil, "k%d", off), Value: fmt.Appendf(nil, "v%d", off),
			Headers: []record.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", off)}}}
		if o.control {
			r = record.EndTxnMarker(true, 0)
			r.Offset, r.Timestamp = off, srcTimestamp+off
		}
		b.Records = append(b.Records, r)
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.logAppendTime > 0 {
		record.AssignOffsets(out, offsets[0], 42, o.logAppendTime)
	}
	return out
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// mirrorReq is a mirror append of records to one partition: Produce
// with Samsa's tagged field.
func mirrorReq(topic string, partition int32, acks int16, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 12, acks, 10000
	req.UnknownTags.Set(model.MirrorAppendTag, []byte{model.MirrorAppendValue})
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// mirrorClient is a franz-go client whose Produce stays below v13 (topic
// names, not IDs), as the mirror's is.
func mirrorClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	return newFranz(t, addr, append(opts, kgo.MaxVersions(kversion.V4_0_0()))...)
}

// mirrorAppend sends a mirror append through franz-go to broker node and
// returns the partition's answer.
func mirrorAppend(t testing.TB, cl *kgo.Client, node int32, req *kmsg.ProduceRequest) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	resp, err := cl.Broker(int(node)).Request(ctx, req)
	if err != nil {
		t.Fatalf("mirror append: %v", err)
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		t.Fatalf("mirror append: %d topics answered", len(pr.Topics))
	}
	return pr.Topics[0].Partitions[0]
}

func mustMirror(t testing.TB, cl *kgo.Client, node int32, topic string, acks int16, wantBase int64, batches ...[]byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	sp := mirrorAppend(t, cl, node, mirrorReq(topic, 0, acks, slices.Concat(batches...)))
	if sp.ErrorCode != 0 || sp.BaseOffset != wantBase {
		t.Fatalf("mirror append: %s %v, base offset %d, want %d", codeName(sp.ErrorCode), deref(sp.ErrorMessage), sp.BaseOffset, wantBase)
	}
	return sp
}

func createMirrorTopic(t *testing.T, b *Broker, topic string, extra map[string]*string) {
	t.Helper()
	configs := map[string]*string{config.MirrorSourceConfig: kadm.StringPtr("east")}
	for k, v := range extra {
		configs[k] = v
	}
	createTopicWith(t, b, topic, 1, configs)
}

// storedBatches is the partition's log, batch by batch, read with raw
// Fetch requests from its start.
func storedBatches(t *testing.T, addr, topic string) [][]byte {
	t.Helper()
	rc := dialRawAddr(t, addr)
	var out [][]byte
	for offset, corr := int64(0), int32(1); ; corr++ {
		part := rawFetch(t, rc, topic, 0, offset, corr)
		if part.ErrorCode == kerr.OffsetOutOfRange.Code && offset == 0 {
			offset = part.LogStartOffset
			continue
		}
		if part.ErrorCode != 0 {
			t.Fatalf("fetch at %d: %s", offset, codeName(part.ErrorCode))
		}
		if offset >= part.HighWatermark {
			return out
		}
		for raw := part.RecordBatches; len(raw) >= record.LogOverhead; {
			size := int(binary.BigEndian.Uint32(raw[8:])) + record.LogOverhead
			if size > len(raw) {
				break
			}
			out = append(out, raw[:size])
			h, _ := record.ParseHeader(raw)
			offset = h.NextOffset()
			raw = raw[size:]
		}
	}
}

// withEpoch is a batch with its partition leader epoch replaced.
func withEpoch(batch []byte, epoch int32) []byte {
	out := bytes.Clone(batch)
	record.SetPartitionLeaderEpoch(out, epoch)
	return out
}

// consumeMirror reads n records from the topic's start with franz-go.
func consumeMirror(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl := newFranz(t, addr, append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))...)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(out), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("consume: %v", err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// An ordinary produce to a mirror topic is refused, through franz-go and
// in a raw request, with the message naming the source and the way out;
// DescribeConfigs shows the config.
func TestE2EMirrorTopicRefusesOrdinaryProduce(t *testing.T) {
	b := startBroker(t)
	createMirrorTopic(t, b, "mirrored", nil)
	cl := newFranz(t, b.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "mirrored", Value: []byte("x")}).FirstErr()
	if err != kerr.InvalidRequest {
		t.Fatalf("franz-go produce: %v, want INVALID_REQUEST", err)
	}
	sp := rawProducePart(dialRaw(t, b), rawProduceReq("mirrored", 0, -1, srcBatch{}.build(t, 0)), 1)
	want := "topic mirrored is a read-only mirror of east; promote it (samsa mirror promote) to write to it"
	if sp.ErrorCode != kerr.InvalidRequest.Code || deref(sp.ErrorMessage) != want {
		t.Fatalf("raw produce: %s %q, want INVALID_REQUEST %q", codeName(sp.ErrorCode), deref(sp.ErrorMessage), want)
	}
	if got := describedTopicConfig(t, kadm.NewClient(cl), ctx, "mirrored", config.MirrorSourceConfig); got.Value == nil || *got.Value != "east" {
		t.Fatalf("DescribeConfigs %s: %+v", config.MirrorSourceConfig, got)
	}
	if end := listEnd(t, cl, "mirrored"); end != 0 {
		t.Fatalf("log end %d after refused produces", end)
	}
}

// listEnd is the partition's latest offset (ListOffsets).
func listEnd(t *testing.T, cl *kgo.Client, topic string) int64 {
	t.Helper()
	start, end := listOffsetsOf(t, cl, topic)
	_ = start
	return end
}

func listOffsetsOf(t *testing.T, cl *kgo.Client, topic string) (start, end int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	adm := kadm.NewClient(cl)
	s, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	e, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	so, _ := s.Lookup(topic, 0)
	eo, _ := e.Lookup(topic, 0)
	if so.Err != nil || eo.Err != nil {
		t.Fatalf("list offsets: %v %v", so.Err, eo.Err)
	}
	return so.Offset, eo.Offset
}

// A mirror append keeps the source's offsets, gaps, batch boundaries,
// timestamps (create and log-append time), keys, headers and compression
// byte for byte but for the leader epoch; a retry is acknowledged again
// without a write; a batch that holds the log end is refused; consumers,
// read_committed ones too, read it all.
func TestE2EMirrorAppendKeepsOffsets(t *testing.T) {
	b := startBroker(t)
	// LogAppendTime on the mirror must not restamp the source's batches.
	createMirrorTopic(t, b, "m", map[string]*string{"message.timestamp.type": kadm.StringPtr("LogAppendTime")})
	cl := mirrorClient(t, b.Addr())
	sent := [][]byte{
		srcBatch{codec: record.CodecGzip}.build(t, seq(0, 5)...),
		srcBatch{logAppendTime: srcTimestamp + 99}.build(t, seq(10, 3)...),
		srcBatch{codec: record.CodecZstd}.build(t, 20, 22), // a compacted batch: a hole inside
		srcBatch{}.build(t, seq(25, 5)...),
	}
	if sp := mustMirror(t, cl, 1, "m", -1, 0, sent[0]); sp.LogStartOffset != 0 || sp.LogAppendTime != -1 {
		t.Fatalf("answer %+v", sp)
	}
	mustMirror(t, cl, 1, "m", 1, 10, sent[1])
	mustMirror(t, cl, 1, "m", -1, 20, sent[2], sent[3]) // two batches in one partition's records

	// A retry of what the log holds, alone or with what follows, is
	// acknowledged at the first batch it skipped or appended.
	mustMirror(t, cl, 1, "m", -1, 10, sent[1])
	next := srcBatch{}.build(t, seq(30, 2)...)
	mustMirror(t, cl, 1, "m", -1, 30, sent[3], next)
	sent = append(sent, next)

	straddle := mirrorAppend(t, cl, 1, mirrorReq("m", 0, -1, srcBatch{}.build(t, seq(31, 3)...)))
	if straddle.ErrorCode != kerr.OffsetOutOfRange.Code || !strings.Contains(deref(straddle.ErrorMessage), "holds the log end offset 32") {
		t.Fatalf("straddling batch: %s %q, want OFFSET_OUT_OF_RANGE naming the log end", codeName(straddle.ErrorCode), deref(straddle.ErrorMessage))
	}

	ts, _ := b.topics.byTopicName("m")
	epoch := ts.partitions[0].LeaderEpoch()
	stored := storedBatches(t, b.Addr(), "m")
	if len(stored) != len(sent) {
		t.Fatalf("%d batches stored, want the %d sent", len(stored), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(stored[i], withEpoch(sent[i], epoch)) {
			t.Fatalf("batch %d differs from the source's at byte %d", i, firstDiff(stored[i], withEpoch(sent[i], epoch)))
		}
	}

	wantOffsets := slices.Concat(seq(0, 5), seq(10, 3), []int64{20, 22}, seq(25, 7))
	for _, isolation := range []kgo.IsolationLevel{kgo.ReadUncommitted(), kgo.ReadCommitted()} {
		recs := consumeMirror(t, b.Addr(), "m", len(wantOffsets), kgo.FetchIsolationLevel(isolation))
		for i, r := range recs {
			off := wantOffsets[i]
			wantTS := srcTimestamp + off
			if off >= 10 && off < 13 {
				wantTS = srcTimestamp + 99 // the source's log-append time
			}
			if r.Offset != off || r.Timestamp.UnixMilli() != wantTS || string(r.Key) != fmt.Sprintf("k%d", off) ||
				len(r.Headers) != 1 || string(r.Headers[0].Value) != fmt.Sprint(off) {
				t.Fatalf("record %d: offset %d, timestamp %d, key %s, headers %v; want offset %d, timestamp %d", i, r.Offset, r.Timestamp.UnixMilli(), r.Key, r.Headers, off, wantTS)
			}
		}
	}
	if start, end := listOffsetsOf(t, cl, "m"); start != 0 || end != 32 {
		t.Fatalf("offsets %d..%d, want 0..32", start, end)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// On an empty log the first mirror append restarts the log at its base,
// so the mirror's log start offset is the source's.
func TestE2EMirrorAppendStartsAtTheSourcesLogStart(t *testing.T) {
	b := startBroker(t)
	createMirrorTopic(t, b, "late", nil)
	cl := mirrorClient(t, b.Addr())
	if sp := mustMirror(t, cl, 1, "late", -1, 1000, srcBatch{}.build(t, seq(1000, 3)...)); sp.LogStartOffset != 1000 {
		t.Fatalf("answered log start %d, want 1000", sp.LogStartOffset)
	}
	if start, end := listOffsetsOf(t, cl, "late"); start != 1000 || end != 1003 {
		t.Fatalf("offsets %d..%d, want 1000..1003", start, end)
	}
	if recs := consumeMirror(t, b.Addr(), "late", 3); recs[0].Offset != 1000 {
		t.Fatalf("first record at %d", recs[0].Offset)
	}
}

// What a mirror append refuses, and the log unchanged after each.
func TestE2EMirrorAppendRefusals(t *testing.T) {
	b := startBroker(t)
	createMirrorTopic(t, b, "m", map[string]*string{"max.message.bytes": kadm.StringPtr("2000")})
	createTopic(t, b, "plain", 1)
	cl := mirrorClient(t, b.Addr())
	mustMirror(t, cl, 1, "m", -1, 0, srcBatch{}.build(t, seq(0, 2)...))
	badCRC := srcBatch{}.build(t, 2)
	badCRC[len(badCRC)-1] ^= 1
	big := record.Batch{BaseOffset: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Records: []record.Record{{Offset: 2, Timestamp: srcTimestamp, Value: bytes.Repeat([]byte("x"), 3000)}}}
	bigBytes, err := big.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	magic1 := srcBatch{}.build(t, 2)
	magic1[16] = 1
	for _, c := range []struct {
		name string
		req  *kmsg.ProduceRequest
		code int16
		msg  string
	}{
		{"transactional batch", mirrorReq("m", 0, -1, srcBatch{transactional: true}.build(t, 2)), kerr.InvalidRecord.Code, "is transactional"},
		{"idempotent batch", mirrorReq("m", 0, -1, srcBatch{producer: true}.build(t, 2)), kerr.InvalidRecord.Code, "carries producer state"},
		{"control batch", mirrorReq("m", 0, -1, srcBatch{control: true, transactional: true}.build(t, 2)), kerr.InvalidRecord.Code, "is a control batch"},
		{"bad CRC", mirrorReq("m", 0, -1, badCRC), kerr.CorruptMessage.Code, "corrupt batch: crc"},
		{"magic 1", mirrorReq("m", 0, -1, magic1), kerr.InvalidRecord.Code, "magic 2 only"},
		{"no batch", mirrorReq("m", 0, -1, nil), kerr.InvalidRecord.Code, "no record batch"},
		{"a partial batch alone", mirrorReq("m", 0, -1, srcBatch{}.build(t, 2)[:40]), kerr.InvalidRecord.Code, "no complete record batch"},
		{"past max.message.bytes", mirrorReq("m", 0, -1, bigBytes), kerr.MessageTooLarge.Code, "max.message.bytes"},
		{"not a mirror topic", mirrorReq("plain", 0, -1, srcBatch{}.build(t, 0)), kerr.InvalidRequest.Code, "topic plain is not a mirror topic"},
		{"a transactional ID", func() *kmsg.ProduceRequest {
			r := mirrorReq("m", 0, -1, srcBatch{}.build(t, 2))
			r.TransactionID = kmsg.StringPtr("tx")
			return r
		}(), kerr.InvalidRequest.Code, "no transactional ID"},
		{"a tag value other than 1", func() *kmsg.ProduceRequest {
			r := mirrorReq("m", 0, -1, srcBatch{}.build(t, 2))
			r.UnknownTags.Set(model.MirrorAppendTag, []byte{2})
			return r
		}(), kerr.InvalidRequest.Code, "must hold the single byte 1"},
	} {
		sp := mirrorAppend(t, cl, 1, c.req)
		if sp.ErrorCode != c.code || !strings.Contains(deref(sp.ErrorMessage), c.msg) {
			t.Errorf("%s: %s %q, want %s with %q", c.name, codeName(sp.ErrorCode), deref(sp.ErrorMessage), codeName(c.code), c.msg)
		}
	}
	if _, end := listOffsetsOf(t, cl, "m"); end != 2 {
		t.Fatalf("log end %d after refused appends, want 2", end)
	}
	if _, end := listOffsetsOf(t, cl, "plain"); end != 0 {
		t.Fatalf("plain topic's log end %d, want 0", end)
	}
}

// Removing samsa.mirror.source promotes the topic: ordinary produces go on
// after the log end. Setting it again makes the topic read-only.
func TestE2EMirrorPromote(t *testing.T) {
	b := startBroker(t)
	createMirrorTopic(t, b, "m", nil)
	cl := mirrorClient(t, b.Addr())
	mustMirror(t, cl, 1, "m", -1, 100, srcBatch{}.build(t, seq(100, 3)...), srcBatch{}.build(t, seq(110, 2)...))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	alter := func(op kadm.IncrementalOp, value *string) {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: config.MirrorSourceConfig, Value: value}}, "m")
		if err == nil {
			err = resp[0].Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	alter(kadm.DeleteConfig, nil)
	producer := newFranz(t, b.Addr())
	var produced *kgo.Record
	waitFor(t, 10*time.Second, "an ordinary produce after promotion", func() bool {
		r, err := producer.ProduceSync(ctx, &kgo.Record{Topic: "m", Value: []byte("after")}).First()
		produced = r
		return err == nil
	})
	if produced.Offset != 112 {
		t.Fatalf("first produce after promotion at %d, want the log end 112", produced.Offset)
	}
	// A mirror append to a promoted topic is refused.
	if sp := mirrorAppend(t, cl, 1, mirrorReq("m", 0, -1, srcBatch{}.build(t, 200))); sp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("mirror append after promotion: %s", codeName(sp.ErrorCode))
	}
	alter(kadm.SetConfig, kadm.StringPtr("west"))
	waitFor(t, 10*time.Second, "a produce refused once the topic is a mirror again", func() bool {
		return producer.ProduceSync(ctx, &kgo.Record{Topic: "m", Value: []byte("x")}).FirstErr() == kerr.InvalidRequest
	})
	mustMirror(t, cl, 1, "m", -1, 200, srcBatch{}.build(t, 200))
}

// A mirror append needs ClusterAction on the cluster, not Write on the
// topic.
func TestE2EMirrorAppendNeedsClusterAction(t *testing.T) {
	e := newAuthzEnv(t, nil)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "m", 1, 1
	rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: config.MirrorSourceConfig, Value: kmsg.StringPtr("east")}}
	req.Topics = append(req.Topics, rt)
	if code := request(t, e.admin, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create: %s", codeName(code))
	}
	alice := e.client("alice", map[kmsg.Key]int16{kmsg.Produce: 12})
	appendTo := func(topic string, base int64) kmsg.ProduceResponseTopicPartition {
		resp := request(t, alice, mirrorReq(topic, 0, -1, srcBatch{}.build(t, seq(base, 2)...))).(*kmsg.ProduceResponse)
		return resp.Topics[0].Partitions[0]
	}
	appendAs := func(base int64) kmsg.ProduceResponseTopicPartition { return appendTo("m", base) }
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeTopic, "m", literal, kmsg.ACLOperationAll)})
	if sp := appendAs(0); sp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("with every operation on the topic but no ClusterAction: %s, want CLUSTER_AUTHORIZATION_FAILED", codeName(sp.ErrorCode))
	}
	// Refused before the topic is looked up: no telling which topics exist.
	if sp := appendTo("no-such-topic", 0); sp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("to a topic that does not exist, without ClusterAction: %s, want CLUSTER_AUTHORIZATION_FAILED", codeName(sp.ErrorCode))
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeCluster, auth.ClusterName, literal, kmsg.ACLOperationClusterAction)})
	if sp := appendAs(0); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("with ClusterAction: %s %q", codeName(sp.ErrorCode), deref(sp.ErrorMessage))
	}
}

// A mirror topic replicated on three nodes: acks=all mirror appends reach
// every replica, each with the source's log start; when the leader dies,
// the new leader acknowledges a retry of the last append (its answer lost
// with the old leader) without writing it again and takes the next append
// at its log end; every replica ends with the same log.
func TestClusterMirrorAppendSurvivesLeaderFailover(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"replica.fetch.backoff.ms": "50"})
	adm, ctx := c.admin()
	configs := map[string]*string{"min.insync.replicas": kmsg.StringPtr("2"), config.MirrorSourceConfig: kmsg.StringPtr("east")}
	if resp, err := adm.CreateTopic(ctx, 1, 3, configs, "mirror"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	// appendToLeader sends a mirror append to whichever node leads,
	// until one answers other than with a retriable error (NOT_LEADER
	// while leadership settles): retrying is safe, the append is
	// idempotent.
	corr := int32(0)
	appendToLeader := func(wantBase int64, batch []byte) {
		t.Helper()
		var sp kmsg.ProduceResponseTopicPartition
		waitFor(t, 30*time.Second, "a mirror append acknowledged", func() bool {
			n := c.leaderOf("mirror", 0)
			if n == nil || n.get() == nil {
				return false
			}
			corr++
			sp = rawProducePart(dialRawAddr(t, n.get().Addr()), mirrorReq("mirror", 0, -1, bytes.Clone(batch)), corr)
			return sp.ErrorCode == 0 || !kerr.IsRetriable(kerr.ErrorForCode(sp.ErrorCode))
		})
		if sp.ErrorCode != 0 || sp.BaseOffset != wantBase {
			t.Fatalf("mirror append: %s %q, base offset %d, want %d", codeName(sp.ErrorCode), deref(sp.ErrorMessage), sp.BaseOffset, wantBase)
		}
	}
	first, second, third := srcBatch{}.build(t, seq(100, 5)...), srcBatch{codec: record.CodecLZ4}.build(t, seq(110, 10)...), srcBatch{}.build(t, seq(130, 5)...)
	appendToLeader(100, first)
	appendToLeader(110, second)

	old := c.leaderOf("mirror", 0)
	c.kill(old)
	waitFor(t, 30*time.Second, "a new leader", func() bool {
		n := c.leaderOf("mirror", 0)
		return n != nil && n != old
	})
	appendToLeader(110, second) // the retry of an append whose answer was lost
	appendToLeader(130, third)

	c.start(old)
	c.waitLive(3)
	c.waitReplicasEqual("mirror", 1)
	for _, n := range c.nodes {
		ts, _ := n.get().topics.byTopicName("mirror")
		if p := ts.partitions[0]; p.LogStartOffset() != 100 || p.LogEndOffset() != 135 || p.HighWatermark() != 135 {
			t.Errorf("node %d: log %d..%d, high watermark %d; want 100..135, 135", n.id, p.LogStartOffset(), p.LogEndOffset(), p.HighWatermark())
		}
	}
	recs := consumeMirror(t, c.bootstrap()[0], "mirror", 20, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var offsets []int64
	for _, r := range recs {
		offsets = append(offsets, r.Offset)
	}
	if want := slices.Concat(seq(100, 5), seq(110, 10), seq(130, 5)); !slices.Equal(offsets, want) {
		t.Fatalf("consumed offsets %v, want %v", offsets, want)
	}
}
