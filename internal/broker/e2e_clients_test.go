package broker

// The end-to-end tests' shared parts: a client-neutral record, the records
// every test produces (keys, null and empty and binary values, headers,
// explicit timestamps), the three client families (franz-go, sarama,
// segmentio/kafka-go) behind one produce/consume interface, and a raw read
// of what the broker actually stored.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// e2eTimeout bounds any one client operation; a hang fails the test
// instead of stalling the suite.
const e2eTimeout = 30 * time.Second

type e2eHeader struct {
	Key   string
	Value []byte
}

// e2eRecord is a record as any client sees it. A nil Key or Value is null.
type e2eRecord struct {
	Partition int32
	Offset    int64 // set when consumed
	Key       []byte
	Value     []byte
	Headers   []e2eHeader
	Timestamp int64 // CreateTime, milliseconds
}

func (r e2eRecord) String() string {
	return fmt.Sprintf("p%d@%d key=%s value=%s headers=%v ts=%d", r.Partition, r.Offset,
		showBytes(r.Key), showBytes(r.Value), r.Headers, r.Timestamp)
}

func showBytes(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) > 24:
		return fmt.Sprintf("%q...(%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// makeRecords builds n records over partitions 0..partitions-1 in turn,
// tagged so that records of different tests never look alike. They hold
// distinct keys (one null, some binary), values that are null, empty,
// every byte value, or long compressible text, zero or four headers
// (an empty value and a repeated key among them), and timestamps that
// mostly step forward but sometimes step back within a batch.
func makeRecords(tag string, n int, partitions int32, baseMs int64) []e2eRecord {
	recs := make([]e2eRecord, n)
	for i := range recs {
		r := &recs[i]
		r.Partition = int32(i) % partitions
		r.Key = fmt.Appendf(nil, "%s-key-%04d", tag, i)
		switch {
		case i == 7:
			r.Key = nil
		case i%11 == 4:
			r.Key = append([]byte{0, 0xff, byte(i)}, r.Key...)
		}
		switch i % 6 {
		case 0:
			r.Value = nil
		case 1:
			r.Value = []byte{}
		case 2:
			r.Value = make([]byte, 256)
			for j := range r.Value {
				r.Value[j] = byte(j + i)
			}
		default:
			r.Value = []byte(strings.Repeat(fmt.Sprintf("%s value %d; ", tag, i), 1+i%40))
		}
		if i%5 != 0 {
			r.Headers = []e2eHeader{
				{"trace", fmt.Appendf(nil, "%s-%d", tag, i)},
				{"empty", []byte{}},
				{"bin", []byte{0, byte(i), 0xff}},
				{"trace", []byte("second value of a repeated key")},
			}
		}
		r.Timestamp = baseMs + int64(i)*10
		if i%4 == 3 {
			r.Timestamp -= 25
		}
	}
	return recs
}

// perPartition counts records by partition.
func perPartition(recs []e2eRecord) map[int32]int {
	m := map[int32]int{}
	for _, r := range recs {
		m[r.Partition]++
	}
	return m
}

// diffRecord describes how got differs from want ("" when equal).
// nullAware also compares null against empty, for clients that keep the
// difference.
func diffRecord(want, got e2eRecord, nullAware bool) string {
	var d []string
	same := func(name string, w, g []byte) {
		if !bytes.Equal(w, g) || nullAware && (w == nil) != (g == nil) {
			d = append(d, fmt.Sprintf("%s %s, want %s", name, showBytes(g), showBytes(w)))
		}
	}
	same("key", want.Key, got.Key)
	same("value", want.Value, got.Value)
	if want.Timestamp != got.Timestamp {
		d = append(d, fmt.Sprintf("timestamp %d, want %d", got.Timestamp, want.Timestamp))
	}
	if len(want.Headers) != len(got.Headers) {
		d = append(d, fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers)))
	} else {
		for i := range want.Headers {
			if want.Headers[i].Key != got.Headers[i].Key {
				d = append(d, fmt.Sprintf("header %d key %q, want %q", i, got.Headers[i].Key, want.Headers[i].Key))
			}
			same(fmt.Sprintf("header %d value", i), want.Headers[i].Value, got.Headers[i].Value)
		}
	}
	return strings.Join(d, "; ")
}

// checkConsumed checks that each partition holds exactly want's records
// for it, in produce order, at offsets first, first+1, ...
func checkConsumed(t *testing.T, want []e2eRecord, got map[int32][]e2eRecord, first map[int32]int64, nullAware bool) {
	t.Helper()
	byPart := map[int32][]e2eRecord{}
	for _, r := range want {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	for p := range got {
		if _, ok := byPart[p]; !ok {
			t.Errorf("partition %d: %d records, want none", p, len(got[p]))
		}
	}
	for p, ws := range byPart {
		gs := got[p]
		if len(gs) != len(ws) {
			t.Errorf("partition %d: %d records, want %d", p, len(gs), len(ws))
		}
		for i := range min(len(gs), len(ws)) {
			if wantOff := first[p] + int64(i); gs[i].Offset != wantOff {
				t.Errorf("partition %d record %d: offset %d, want %d", p, i, gs[i].Offset, wantOff)
			}
			if d := diffRecord(ws[i], gs[i], nullAware); d != "" {
				t.Errorf("partition %d offset %d: %s\n got: %v\nwant: %v", p, gs[i].Offset, d, gs[i], ws[i])
			}
		}
	}
}

// zeroOffsets is the first-offset map of fresh partitions.
func zeroOffsets() map[int32]int64 { return map[int32]int64{} }

// e2eFamily is one client library behind a common produce and consume.
type e2eFamily struct {
	name string
	// nullAware: the library tells a null key or value from an empty one
	// on the consuming side.
	nullAware bool
	// produce writes recs to their partitions with one codec and acks
	// mode and returns once the client reports them written.
	produce func(t *testing.T, addr, topic, codec string, acks int16, recs []e2eRecord)
	// consume reads want[p] records of each partition p from offset
	// from[p] (0 when absent) and returns them in order.
	consume func(t *testing.T, addr, topic string, want map[int32]int, from map[int32]int64) map[int32][]e2eRecord
}

var e2eCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// codecIDs are the RecordBatch attribute values of e2eCodecs.
var codecIDs = map[string]int8{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

var e2eFamilies = []e2eFamily{
	{name: "franz", nullAware: true, produce: franzProduce, consume: franzConsume},
	{name: "sarama", nullAware: true, produce: saramaProduce, consume: saramaConsume},
	{name: "kafkago", nullAware: false, produce: kafkagoProduce, consume: kafkagoConsume},
}

func familyByName(t *testing.T, name string) e2eFamily {
	for _, f := range e2eFamilies {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no client family %q", name)
	return e2eFamily{}
}

// newFranz is a franz-go client for addr that does not produce
// idempotently unless asked (acks other than all need that).
func newFranz(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DisableIdempotentWrite()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func franzCodec(codec string) kgo.CompressionCodec {
	switch codec {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

func franzAcks(acks int16) kgo.Acks {
	switch acks {
	case 0:
		return kgo.NoAck()
	case 1:
		return kgo.LeaderAck()
	}
	return kgo.AllISRAcks()
}

func toFranz(topic string, r e2eRecord) *kgo.Record {
	kr := &kgo.Record{Topic: topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)}
	for _, h := range r.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return kr
}

func fromFranz(kr *kgo.Record) e2eRecord {
	r := e2eRecord{Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp.UnixMilli()}
	for _, h := range kr.Headers {
		r.Headers = append(r.Headers, e2eHeader{h.Key, h.Value})
	}
	return r
}

func franzProduce(t *testing.T, addr, topic, codec string, acks int16, recs []e2eRecord) {
	t.Helper()
	cl := newFranz(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(franzCodec(codec)), kgo.RequiredAcks(franzAcks(acks)))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = toFranz(topic, r)
	}
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		t.Fatalf("franz produce: %v", err)
	}
	cl.Close()
}

func franzConsume(t *testing.T, addr, topic string, want map[int32]int, from map[int32]int64) map[int32][]e2eRecord {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	remaining := 0
	for p, n := range want {
		offsets[p] = kgo.NewOffset().At(from[p])
		remaining += n
	}
	cl := newFranz(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	got := map[int32][]e2eRecord{}
	for remaining > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz consume: %d records missing: %v", remaining, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("franz consume %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(kr *kgo.Record) {
			got[kr.Partition] = append(got[kr.Partition], fromFranz(kr))
			remaining--
		})
	}
	return got
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "samsa-e2e"
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	// Closing a partition consumer waits out its long poll.
	cfg.Consumer.MaxWaitTime = 50 * time.Millisecond
	return cfg
}

func saramaCodec(codec string) sarama.CompressionCodec {
	switch codec {
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}

// saramaBytes keeps nil as a nil Encoder, which sarama sends as null.
func saramaBytes(b []byte) sarama.Encoder {
	if b == nil {
		return nil
	}
	return sarama.ByteEncoder(b)
}

// saramaConnected returns a sarama client whose connections to every
// broker are open. A producer started on a fresh client can race sarama's
// own lazy connect: its first request fails with "broker not connected",
// sarama drops and re-registers the broker, and a batch already on the
// closed connection is sent again. With a non-idempotent producer that is a
// legitimate duplicate (at-least-once), which these exact-count tests must
// not see.
func saramaConnected(t *testing.T, addr string, cfg *sarama.Config) sarama.Client {
	t.Helper()
	client, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama client: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	for _, br := range client.Brokers() {
		if err := br.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
			t.Fatalf("sarama open broker %d: %v", br.ID(), err)
		}
		// Open connects in the background holding the broker's lock, and
		// Connected takes that lock: it returns once the connect is done.
		if ok, err := br.Connected(); !ok {
			t.Fatalf("sarama broker %d not connected: %v", br.ID(), err)
		}
	}
	return client
}

func saramaProduce(t *testing.T, addr, topic, codec string, acks int16, recs []e2eRecord) {
	t.Helper()
	cfg := saramaConfig()
	cfg.Producer.RequiredAcks = sarama.RequiredAcks(acks)
	cfg.Producer.Compression = saramaCodec(codec)
	client := saramaConnected(t, addr, cfg)
	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, len(recs))
	for i, r := range recs {
		m := &sarama.ProducerMessage{Topic: topic, Partition: r.Partition, Key: saramaBytes(r.Key),
			Value: saramaBytes(r.Value), Timestamp: time.UnixMilli(r.Timestamp)}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		msgs[i] = m
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("sarama produce: %v", err)
	}
}

func saramaConsume(t *testing.T, addr, topic string, want map[int32]int, from map[int32]int64) map[int32][]e2eRecord {
	t.Helper()
	c, err := sarama.NewConsumer([]string{addr}, saramaConfig())
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer c.Close()
	timeout := time.NewTimer(e2eTimeout)
	defer timeout.Stop()
	// All partition consumers start before any is read: sarama batches
	// new subscriptions for 100ms.
	pcs := map[int32]sarama.PartitionConsumer{}
	for p := range want {
		start := from[p]
		if start == 0 {
			start = sarama.OffsetOldest
		}
		pc, err := c.ConsumePartition(topic, p, start)
		if err != nil {
			t.Fatalf("sarama consume %d: %v", p, err)
		}
		defer pc.Close()
		pcs[p] = pc
	}
	got := map[int32][]e2eRecord{}
	for p, n := range want {
		pc := pcs[p]
		for len(got[p]) < n {
			select {
			case m := <-pc.Messages():
				r := e2eRecord{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Timestamp.UnixMilli()}
				for _, h := range m.Headers {
					r.Headers = append(r.Headers, e2eHeader{string(h.Key), h.Value})
				}
				got[p] = append(got[p], r)
			case err := <-pc.Errors():
				t.Fatalf("sarama consume %d: %v", p, err)
			case <-timeout.C:
				t.Fatalf("sarama consume %d: %d of %d records after %v", p, len(got[p]), n, e2eTimeout)
			}
		}
	}
	return got
}

func kafkagoCodec(codec string) kafka.Compression {
	switch codec {
	case "gzip":
		return kafka.Gzip
	case "snappy":
		return kafka.Snappy
	case "lz4":
		return kafka.Lz4
	case "zstd":
		return kafka.Zstd
	}
	return 0
}

func kafkagoProduce(t *testing.T, addr, topic, codec string, acks int16, recs []e2eRecord) {
	t.Helper()
	w := &kafka.Writer{
		Addr:  kafka.TCP(addr),
		Topic: topic,
		// A transport of its own: the shared default one caches metadata
		// from earlier tests' topics.
		Transport: &kafka.Transport{},
		// The partition rides in WriterData: kafka-go's Partition field
		// is read-only on the writing side.
		Balancer:     kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) }),
		RequiredAcks: kafka.RequiredAcks(acks),
		Compression:  kafkagoCodec(codec),
		BatchSize:    len(recs),
		BatchTimeout: 10 * time.Millisecond,
		BatchBytes:   16 << 20,
	}
	defer w.Close()
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		m := kafka.Message{Key: r.Key, Value: r.Value, Time: time.UnixMilli(r.Timestamp), WriterData: int(r.Partition)}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
		msgs[i] = m
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("kafka-go produce: %v", err)
	}
}

func kafkagoConsume(t *testing.T, addr, topic string, want map[int32]int, from map[int32]int64) map[int32][]e2eRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	got := map[int32][]e2eRecord{}
	for p, n := range want {
		rd := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: int(p),
			MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
		if err := rd.SetOffset(from[p]); err != nil {
			t.Fatal(err)
		}
		for len(got[p]) < n {
			m, err := rd.ReadMessage(ctx)
			if err != nil {
				rd.Close()
				t.Fatalf("kafka-go consume %d: %d of %d records: %v", p, len(got[p]), n, err)
			}
			r := e2eRecord{Partition: int32(m.Partition), Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Time.UnixMilli()}
			for _, h := range m.Headers {
				r.Headers = append(r.Headers, e2eHeader{h.Key, h.Value})
			}
			got[p] = append(got[p], r)
		}
		rd.Close()
	}
	return got
}

// rawFetch sends one Fetch v12 for a partition at offset on rc.
func rawFetch(t *testing.T, rc *rawConn, topic string, p int32, offset int64, corr int32) *kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 64 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = p
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 64 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := rc.roundTrip(req, corr).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch %s/%d: %d topics in response", topic, p, len(resp.Topics))
	}
	return &resp.Topics[0].Partitions[0]
}

// fetchedBatches decodes a fetch response's batch headers (Records left out).
func fetchedBatches(t *testing.T, part *kmsg.FetchResponseTopicPartition) []kmsg.RecordBatch {
	t.Helper()
	var batches []kmsg.RecordBatch
	for raw := part.RecordBatches; len(raw) >= 61; {
		var batch kmsg.RecordBatch
		if err := batch.ReadFrom(raw); err != nil {
			t.Fatalf("fetch: batch: %v", err)
		}
		raw = raw[12+batch.Length:]
		batch.Records = nil
		batches = append(batches, batch)
	}
	return batches
}

// fetchedRecords is what a client makes of a fetch at offset.
func fetchedRecords(t *testing.T, topic string, p int32, offset int64, part *kmsg.FetchResponseTopicPartition) []e2eRecord {
	t.Helper()
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: topic, Partition: p, Offset: offset},
		part, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Fatalf("fetch %s/%d: %v", topic, p, fp.Err)
	}
	recs := make([]e2eRecord, len(fp.Records))
	for i, kr := range fp.Records {
		recs[i] = fromFranz(kr)
	}
	return recs
}

// storedPartition reads a whole partition with hand-made Fetch v12
// requests on its own connection and decodes the bytes with franz-go's
// parser (CRC checked): what the broker stored, not what a client
// makes of it. It also returns every batch's header (Records left out).
func storedPartition(t *testing.T, b *Broker, topic string, p int32) ([]e2eRecord, []kmsg.RecordBatch) {
	t.Helper()
	rc := dialRaw(t, b)
	var recs []e2eRecord
	var batches []kmsg.RecordBatch
	for offset, corr := int64(0), int32(1); ; corr++ {
		part := rawFetch(t, rc, topic, p, offset, corr)
		if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
			t.Fatalf("fetch %s/%d at %d: %v", topic, p, offset, err)
		}
		if offset >= part.HighWatermark {
			return recs, batches
		}
		batches = append(batches, fetchedBatches(t, part)...)
		got := fetchedRecords(t, topic, p, offset, part)
		if len(got) == 0 {
			t.Fatalf("fetch %s/%d at %d below high watermark %d returned no records", topic, p, offset, part.HighWatermark)
		}
		recs = append(recs, got...)
		offset = got[len(got)-1].Offset + 1
	}
}

// checkStored checks the broker holds exactly want, null for null, and
// that every batch carries the codec it was produced with (any codec
// when codec is "").
func checkStored(t *testing.T, b *Broker, topic string, partitions int32, codec string, want []e2eRecord) {
	t.Helper()
	got := map[int32][]e2eRecord{}
	for p := range partitions {
		recs, batches := storedPartition(t, b, topic, p)
		if len(recs) > 0 {
			got[p] = recs
		}
		for i, batch := range batches {
			if c := int8(batch.Attributes & 7); codec != "" && c != codecIDs[codec] {
				t.Errorf("partition %d batch %d: codec %d, want %d (%s)", p, i, c, codecIDs[codec], codec)
			}
		}
	}
	checkConsumed(t, want, got, zeroOffsets(), true)
}

// createTopic creates a topic with the admin API, as a client would.
func createTopic(t testing.TB, b *Broker, name string, partitions int32) kadm.CreateTopicResponse {
	t.Helper()
	return createTopicWith(t, b, name, partitions, nil)
}

// createTopicWith creates a topic with config overrides.
func createTopicWith(t testing.TB, b *Broker, name string, partitions int32, configs map[string]*string) kadm.CreateTopicResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	if resp.NumPartitions != partitions {
		t.Fatalf("create topic %s: %d partitions, want %d", name, resp.NumPartitions, partitions)
	}
	return resp
}
