package broker

// Bad input on a connection gets Kafka's error for it (or, where Kafka
// closes the connection, a closed connection), and the broker keeps
// serving that connection when Kafka would and every other one always.
// Framing errors (sizes, headers, unknown keys and versions) are in
// wire_test.go; the request fuzzers (fuzz_test.go) feed arbitrary frames
// to every API.

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// healthyClient produces and consumes through a real client on its own
// connections, to show bad input elsewhere did not hurt the broker.
type healthyClient struct {
	b        *Broker
	producer *kgo.Client
	n        int
}

func newHealthyClient(t *testing.T, b *Broker) *healthyClient {
	createTopic(t, b, "healthy", 1)
	return &healthyClient{b: b, producer: newFranz(t, b.Addr())}
}

func (h *healthyClient) check(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	h.n++
	value := fmt.Appendf(nil, "healthy %d", h.n)
	res, err := h.producer.ProduceSync(ctx, &kgo.Record{Topic: "healthy", Value: value}).First()
	if err != nil {
		t.Fatalf("healthy produce: %v", err)
	}
	consumer := newFranz(t, h.b.Addr(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"healthy": {0: kgo.NewOffset().At(res.Offset)}}))
	defer consumer.Close()
	for {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("healthy consume: %v", ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("healthy consume: %v", err) })
		if recs := fs.Records(); len(recs) > 0 {
			if !bytes.Equal(recs[0].Value, value) {
				t.Fatalf("healthy consume: %q, want %q", recs[0].Value, value)
			}
			return
		}
	}
}

// stillServes checks a connection still answers requests.
func stillServes(t *testing.T, rc *rawConn) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-test", "1"
	if resp := rc.roundTrip(req, 999).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions after bad input: error %d", resp.ErrorCode)
	}
}

func TestBadInputGetsKafkaErrors(t *testing.T) {
	b := startBroker(t)
	healthy := newHealthyClient(t, b)
	createTopic(t, b, "target", 1)
	createTopic(t, b, "zstd-target", 1)
	createTopicWith(t, b, "small", 1, map[string]*string{"max.message.bytes": kmsg.StringPtr("1024")})
	now := time.Now().UnixMilli()
	batch := func(values ...string) []byte {
		var recs []rawRecord
		for _, v := range values {
			recs = append(recs, rawRecord{Key: []byte("k"), Value: []byte(v)})
		}
		return rawBatch(rawBatchOptions{timestamp: now}, recs...)
	}
	rc := dialRaw(t, b)
	if sp := rawProducePart(rc, rawProduceReq("target", 0, -1, batch("a", "b", "c")), 1); sp.ErrorCode != 0 {
		t.Fatalf("produce to target: error %d", sp.ErrorCode)
	}

	produce := func(topic string, p int32, acks int16, records []byte) func(*rawConn) int16 {
		return func(rc *rawConn) int16 {
			return rawProducePart(rc, rawProduceReq(topic, p, acks, records), 1).ErrorCode
		}
	}
	produceV := func(version int16, topic string, records []byte) func(*rawConn) int16 {
		return func(rc *rawConn) int16 {
			req := rawProduceReq(topic, 0, 1, records)
			req.Version = version
			return rawProducePart(rc, req, 1).ErrorCode
		}
	}
	fetch := func(topic string, offset int64, epoch int32) func(*rawConn) int16 {
		return func(rc *rawConn) int16 {
			req := rawFetchReq(12, topic, [16]byte{}, 0, offset)
			req.Topics[0].Partitions[0].CurrentLeaderEpoch = epoch
			return rawFetchPart(rc, req, 1).ErrorCode
		}
	}
	flipped := batch("the payload the CRC covers")
	flipped[len(flipped)-5] ^= 0xff
	badCRC := batch("x")
	badCRC[17] ^= 1
	longer := batch("x")
	longer[11] += 100 // batch length past the data
	magic1 := batch("x")
	magic1[16] = 1
	control := rawBatch(rawBatchOptions{timestamp: now, attributes: 0x30}, // transactional control batch
		rawRecord{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}) // COMMIT marker
	zstdBatch := rawBatch(rawBatchOptions{timestamp: now, zstd: true}, rawRecord{Value: []byte("x")})
	cases := []struct {
		name   string
		send   func(*rawConn) int16
		want   int16
		closes bool // Kafka closes the connection instead of answering
	}{
		// Kafka's ProduceRequest.validateRecords and
		// ByteBufferLogInputStream: a record set holding no complete batch
		// is INVALID_RECORD; a batch header with a size under the minimum
		// record overhead or an unknown magic is CORRUPT_MESSAGE; a batch
		// of magic 0 or 1 is INVALID_RECORD from v3.
		{name: "an empty record set", send: produce("target", 0, 1, []byte{}), want: kerr.InvalidRecord.Code},
		{name: "a batch length past the data", send: produce("target", 0, 1, longer), want: kerr.InvalidRecord.Code},
		{name: "a batch length under the minimum", send: produce("target", 0, 1, make([]byte, 20)), want: kerr.CorruptMessage.Code},
		{name: "a magic 1 batch", send: produce("target", 0, 1, magic1), want: kerr.InvalidRecord.Code},
		{name: "record bytes that do not match the CRC", send: produce("target", 0, 1, flipped), want: kerr.CorruptMessage.Code},
		{name: "a wrong CRC", send: produce("target", 0, 1, badCRC), want: kerr.CorruptMessage.Code},
		{name: "two batches for one partition", send: produce("target", 0, 1, append(batch("x"), batch("y")...)), want: kerr.InvalidRecord.Code},
		{name: "a control batch from a client", send: produce("target", 0, 1, control), want: kerr.InvalidRecord.Code},
		{name: "zstd before Produce v7", send: produceV(6, "zstd-target", zstdBatch), want: kerr.UnsupportedCompressionType.Code},
		{name: "produce to a missing topic", send: produce("no-such-topic", 0, 1, batch("x")), want: kerr.UnknownTopicOrPartition.Code},
		{name: "produce to a missing partition", send: produce("target", 5, 1, batch("x")), want: kerr.UnknownTopicOrPartition.Code},
		{name: "a batch over max.message.bytes", send: produce("small", 0, 1, batch(string(make([]byte, 2000)))), want: kerr.MessageTooLarge.Code},
		{name: "acks=2", send: produce("target", 0, 2, batch("x")), want: kerr.InvalidRequiredAcks.Code},
		{name: "fetch past the end", send: fetch("target", 100, -1), want: kerr.OffsetOutOfRange.Code},
		{name: "fetch at a negative offset", send: fetch("target", -5, -1), want: kerr.OffsetOutOfRange.Code},
		{name: "fetch from a missing topic", send: fetch("no-such-topic", 0, -1), want: kerr.UnknownTopicOrPartition.Code},
		{name: "fetch with a leader epoch from the future", send: fetch("target", 0, 7), want: kerr.UnknownLeaderEpoch.Code},
		{name: "list offsets of a missing topic", send: func(rc *rawConn) int16 {
			return rawListOffsetsPart(rc, rawListOffsetsReq("no-such-topic", 0, -1), 1).ErrorCode
		}, want: kerr.UnknownTopicOrPartition.Code},
		{name: "a failed acks=0 produce", send: func(rc *rawConn) int16 {
			rc.sendFrame(encodeRequest(rawProduceReq("no-such-topic", 0, 0, batch("x")), 1))
			return 0
		}, closes: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := dialRaw(t, b)
			got := c.send(rc)
			if c.closes {
				rc.expectClosed()
			} else {
				stillServes(t, rc)
			}
			healthy.check(t)
			if !c.closes && got != c.want {
				t.Errorf("error %d (%v), want %d (%v)", got, kerr.ErrorForCode(got), c.want, kerr.ErrorForCode(c.want))
			}
		})
	}

	// None of it changed the target partition or created a topic.
	rc = dialRaw(t, b)
	fp := rawFetchPart(rc, rawFetchReq(12, "target", [16]byte{}, 0, 0), 1)
	if fp.ErrorCode != 0 || fp.HighWatermark != 3 {
		t.Errorf("target after bad input: error %d, high watermark %d; want the 3 records produced before", fp.ErrorCode, fp.HighWatermark)
	}
	if mt := rawMetadataTopic(rc, "no-such-topic", 2); mt.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("a produce to a missing topic created it: metadata error %d", mt.ErrorCode)
	}
}

// A fetch or ListOffsets that names a leader epoch older than the
// partition's gets FENCED_LEADER_EPOCH (KIP-320). One node cannot move
// leadership through any API, so the test applies, in process, the image
// a leader change (to none and back) would bring.
func TestBadInputStaleLeaderEpoch(t *testing.T) {
	b := startBroker(t)
	healthy := newHealthyClient(t, b)
	created := createTopic(t, b, "fenced", 1)
	rc := dialRaw(t, b)
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: []byte("v")})
	if sp := rawProducePart(rc, rawProduceReq("fenced", 0, -1, batch), 1); sp.ErrorCode != 0 {
		t.Fatalf("produce: error %d", sp.ErrorCode)
	}
	img := b.ctrl.Image()
	id := model.TopicID(created.ID)
	next, err := img.ApplyAt(img.Offset()+1000,
		metadata.PartitionChange{TopicID: id, Partition: 0, Leader: ptr(metadata.NoLeader)},
		metadata.PartitionChange{TopicID: id, Partition: 0, Leader: ptr(model.NodeID(b.cfg.NodeID))})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.applyImage(next); err != nil {
		t.Fatal(err)
	}
	mt := rawMetadataTopic(rc, "fenced", 2)
	epoch := mt.Partitions[0].LeaderEpoch
	if epoch < 2 {
		t.Fatalf("leader epoch %d after two leader changes", epoch)
	}
	for i, c := range []struct {
		epoch int32
		want  int16
	}{{0, kerr.FencedLeaderEpoch.Code}, {epoch - 1, kerr.FencedLeaderEpoch.Code}, {epoch, 0}, {-1, 0}, {epoch + 1, kerr.UnknownLeaderEpoch.Code}} {
		req := rawFetchReq(12, "fenced", [16]byte{}, 0, 0)
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = c.epoch
		if got := rawFetchPart(rc, req, int32(10+i)).ErrorCode; got != c.want {
			t.Errorf("fetch with leader epoch %d (current %d): error %d, want %d", c.epoch, epoch, got, c.want)
		}
		lreq := rawListOffsetsReq("fenced", 0, -1)
		lreq.Topics[0].Partitions[0].CurrentLeaderEpoch = c.epoch
		if got := rawListOffsetsPart(rc, lreq, int32(20+i)).ErrorCode; got != c.want {
			t.Errorf("list offsets with leader epoch %d (current %d): error %d, want %d", c.epoch, epoch, got, c.want)
		}
	}
	stillServes(t, rc)
	healthy.check(t)
}

// A batch followed by bytes that do not make a second whole batch is
// accepted and the bytes dropped, as Kafka trims them; the stored batch is
// exactly the one sent.
func TestProduceTrimsTrailingPartialBytes(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "trim", 1)
	good := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Key: []byte("k"), Value: []byte("v")})
	rc := dialRaw(t, b)
	for i, junk := range [][]byte{{1, 2, 3}, append(make([]byte, 8), 0, 0, 1, 0)} {
		sp := rawProducePart(rc, rawProduceReq("trim", 0, -1, append(append([]byte(nil), good...), junk...)), int32(i))
		if sp.ErrorCode != 0 || sp.BaseOffset != int64(i) {
			t.Fatalf("junk %d: error %d, base offset %d", i, sp.ErrorCode, sp.BaseOffset)
		}
	}
	fp := rawFetchPart(rc, rawFetchReq(12, "trim", [16]byte{}, 0, 0), 9)
	if want := 2 * len(good); len(fp.RecordBatches) != want || fp.HighWatermark != 2 {
		t.Fatalf("stored %d bytes (want %d), high watermark %d", len(fp.RecordBatches), want, fp.HighWatermark)
	}
}
