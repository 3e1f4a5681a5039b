package broker

import (
	"context"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A topic's compression.type decides how its batches are stored: a batch
// produced with another codec is rebuilt with the topic's, records
// unchanged, as Kafka's LogValidator does; "producer" keeps the producer's.
func TestE2ETopicCompressionType(t *testing.T) {
	b := startBroker(t)
	for _, tt := range []struct {
		name, produced, stored string
		configs                map[string]*string
	}{
		{"gzip to zstd", "gzip", "zstd", map[string]*string{"compression.type": kadm.StringPtr("zstd")}},
		{"lz4 to gzip level 1", "lz4", "gzip", map[string]*string{"compression.type": kadm.StringPtr("gzip"), "compression.gzip.level": kadm.StringPtr("1")}},
		{"none to lz4 level 12", "none", "lz4", map[string]*string{"compression.type": kadm.StringPtr("lz4"), "compression.lz4.level": kadm.StringPtr("12")}},
		{"zstd to uncompressed", "zstd", "none", map[string]*string{"compression.type": kadm.StringPtr("uncompressed")}},
		{"snappy kept", "snappy", "snappy", map[string]*string{"compression.type": kadm.StringPtr("snappy")}},
		{"producer", "gzip", "gzip", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			topic := "compress-" + tt.stored + "-" + tt.produced
			createTopicWith(t, b, topic, 2, tt.configs)
			recs := makeRecords(topic, 60, 2, time.Now().UnixMilli())
			franzProduce(t, b.Addr(), topic, tt.produced, -1, recs)
			checkStored(t, b, topic, 2, tt.stored, recs)
		})
	}
}

// The broker-wide compression.type is the default of every topic.
func TestE2EBrokerCompressionType(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"compression.type": "zstd", "compression.zstd.level": "9"})
	createTopic(t, b, "dflt", 1)
	recs := makeRecords("dflt", 20, 1, time.Now().UnixMilli())
	franzProduce(t, b.Addr(), "dflt", "gzip", -1, recs)
	checkStored(t, b, "dflt", 1, "zstd", recs)
}

// An idempotent producer's retry of a batch the broker recompressed is
// still recognised: the producer fields survive the rebuild.
func TestE2ERecompressedBatchDeduplicated(t *testing.T) {
	b := startBroker(t)
	createTopicWith(t, b, "dedup", 1, map[string]*string{"compression.type": kadm.StringPtr("zstd")})
	r := dialRaw(t, b)
	pid := initProducerID(r, 4, nil, -1, -1)
	batch := record.Batch{Codec: record.CodecGzip, ProducerID: pid.ProducerID, ProducerEpoch: pid.ProducerEpoch, BaseSequence: 0,
		Records: []record.Record{{Offset: 0, Timestamp: time.Now().UnixMilli(), Value: []byte("once")}, {Offset: 1, Timestamp: time.Now().UnixMilli(), Value: []byte("only")}}}
	raw, err := batch.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the first send and two retries of the same batch
		sp := rawProducePart(r, rawProduceReq("dedup", 0, -1, append([]byte(nil), raw...)), int32(10+i))
		if sp.ErrorCode != 0 || sp.BaseOffset != 0 {
			t.Fatalf("send %d: error %v, base offset %d, want 0", i, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
		}
	}
	recs, batches := storedPartition(t, b, "dedup", 0)
	if len(recs) != 2 || len(batches) != 1 || batches[0].Attributes&7 != 4 || batches[0].ProducerID != pid.ProducerID {
		t.Fatalf("stored %d records in %d batches (%+v), want the batch once, zstd, with its producer", len(recs), len(batches), batches)
	}

	// And through franz-go's idempotent producer, end to end.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ProducerBatchCompression(kgo.GzipCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "dedup", Value: []byte("idempotent")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if recs, _ := storedPartition(t, b, "dedup", 0); len(recs) != 3 || string(recs[2].Value) != "idempotent" {
		t.Fatalf("stored %v", recs)
	}
}

// A batch that fits max.message.bytes as the producer compressed it but
// not as the topic stores it is refused, as Kafka refuses it.
func TestE2ERecompressedBatchTooLarge(t *testing.T) {
	b := startBroker(t)
	createTopicWith(t, b, "small", 1, map[string]*string{
		"compression.type": kadm.StringPtr("uncompressed"), "max.message.bytes": kadm.StringPtr("2000")})
	batch := record.Batch{Codec: record.CodecGzip, ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Records: []record.Record{{Offset: 0, Timestamp: time.Now().UnixMilli(), Value: make([]byte, 10000)}}}
	raw, err := batch.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 2000 {
		t.Fatalf("test batch of %d bytes does not fit max.message.bytes compressed", len(raw))
	}
	sp := rawProducePart(dialRaw(t, b), rawProduceReq("small", 0, -1, raw), 1)
	if sp.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("error %v, want MESSAGE_TOO_LARGE", kerr.ErrorForCode(sp.ErrorCode))
	}
}
