package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// e2eRecordsPerCase keeps the matrix quick while still making several
// batches per partition for clients that split them.
const e2eRecordsPerCase = 60

func acksName(acks int16) string {
	if acks == -1 {
		return "all"
	}
	return fmt.Sprint(acks)
}

// Every client family produces with every codec and every acks mode to a
// three-partition topic and reads its records back byte-identical: keys,
// null and empty values, binary values, headers and timestamps, at
// contiguous offsets from 0. A raw fetch then checks the broker kept each
// batch in the producer's codec and null apart from empty, which not
// every client can show.
func TestE2EMatrix(t *testing.T) {
	b := startBroker(t)
	baseMs := time.Now().Add(-time.Minute).UnixMilli()
	for _, fam := range e2eFamilies {
		for _, codec := range e2eCodecs {
			for _, acks := range []int16{0, 1, -1} {
				name := fmt.Sprintf("%s-%s-acks%s", fam.name, codec, acksName(acks))
				t.Run(name, func(t *testing.T) {
					topic := "matrix-" + name
					createTopic(t, b, topic, 3)
					want := makeRecords(name, e2eRecordsPerCase, 3, baseMs)
					fam.produce(t, b.Addr(), topic, codec, acks, want)
					got := fam.consume(t, b.Addr(), topic, perPartition(want), nil)
					checkConsumed(t, want, got, zeroOffsets(), fam.nullAware)
					checkStored(t, b, topic, 3, codec, want)
				})
			}
		}
	}
}

// Records produced by one client family read back identically with the
// others, compressed batches included: sarama and kafka-go send snappy in
// xerial framing, franz-go raw snappy.
func TestE2ECrossClient(t *testing.T) {
	b := startBroker(t)
	baseMs := time.Now().Add(-time.Minute).UnixMilli()
	for _, producer := range e2eFamilies {
		for _, codec := range e2eCodecs {
			name := fmt.Sprintf("%s-%s", producer.name, codec)
			t.Run(name, func(t *testing.T) {
				topic := "cross-" + name
				createTopic(t, b, topic, 3)
				want := makeRecords(name, e2eRecordsPerCase, 3, baseMs)
				producer.produce(t, b.Addr(), topic, codec, -1, want)
				for _, consumer := range e2eFamilies {
					if consumer.name == producer.name {
						continue
					}
					t.Run("to-"+consumer.name, func(t *testing.T) {
						got := consumer.consume(t, b.Addr(), topic, perPartition(want), nil)
						checkConsumed(t, want, got, zeroOffsets(), consumer.nullAware)
					})
				}
			})
		}
	}
}

// franz-go's default producer is idempotent (InitProducerId, sequence
// numbers, acks=all); its records come back like any others.
func TestE2EFranzIdempotentDefault(t *testing.T) {
	b := startBroker(t)
	baseMs := time.Now().Add(-time.Minute).UnixMilli()
	for _, codec := range e2eCodecs {
		t.Run(codec, func(t *testing.T) {
			topic := "idempotent-" + codec
			createTopic(t, b, topic, 3)
			want := makeRecords(topic, e2eRecordsPerCase, 3, baseMs)
			cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.ProducerBatchCompression(franzCodec(codec)))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
			defer cancel()
			krs := make([]*kgo.Record, len(want))
			for i, r := range want {
				krs[i] = toFranz(topic, r)
			}
			if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
				t.Fatalf("idempotent produce: %v", err)
			}
			checkStored(t, b, topic, 3, codec, want)
			for p := range int32(3) {
				_, batches := storedPartition(t, b, topic, p)
				for _, batch := range batches {
					if batch.ProducerID < 0 || batch.FirstSequence < 0 {
						t.Errorf("partition %d: batch at %d has producer ID %d, sequence %d: not idempotent", p, batch.FirstOffset, batch.ProducerID, batch.FirstSequence)
					}
				}
			}
			got := franzConsume(t, b.Addr(), topic, perPartition(want), nil)
			checkConsumed(t, want, got, zeroOffsets(), true)
		})
	}
}
