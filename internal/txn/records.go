package txn

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record versions of __transaction_state, as Apache Kafka writes them. The
// key is version 0; the value is version 0, or the flexible version 1 with
// KIP-890's tagged fields for a client on transaction version 2.
const (
	txnKeyVersion         = 0
	txnValueVersion       = 0
	txnValueFlexVersion   = 1
	transactionVersionTV2 = 2
)

func txnKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: txnKeyVersion, TransactionalID: id}
	return k.AppendTo(nil)
}

func txnValue(s *txnState) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = txnValueVersion
	if s.version >= transactionVersionTV2 {
		v.Version = txnValueFlexVersion
		v.PreviousProducerID = s.lastProducerID
		v.NextProducerID = s.nextProducerID
		v.ClientTransactionVersion = s.version
	}
	v.ProducerID = s.producerID
	v.ProducerEpoch = s.producerEpoch
	v.TimeoutMillis = int32(s.timeout.Milliseconds())
	v.State = s.state
	v.Topics = topicsOf(s.partitions)
	v.LastUpdateTimestamp = s.lastUpdate.UnixMilli()
	v.StartTimestamp = -1
	if !s.start.IsZero() {
		v.StartTimestamp = s.start.UnixMilli()
	}
	return v.AppendTo(nil)
}

// topicsOf groups sorted partitions by topic, as the value stores them.
func topicsOf(tps []model.TopicPartition) []kmsg.TxnMetadataValueTopic {
	var out []kmsg.TxnMetadataValueTopic
	for _, tp := range tps {
		if n := len(out); n == 0 || out[n-1].Topic != tp.Topic {
			out = append(out, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
		}
		last := &out[len(out)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	return out
}

// stateFromValue is the inverse of txnValue; strings are copied.
func stateFromValue(v *kmsg.TxnMetadataValue) txnState {
	s := txnState{
		producerID:        v.ProducerID,
		producerEpoch:     v.ProducerEpoch,
		lastProducerID:    noProducerID,
		lastProducerEpoch: noProducerEpoch,
		nextProducerID:    noProducerID,
		timeout:           time.Duration(v.TimeoutMillis) * time.Millisecond,
		state:             v.State,
		lastUpdate:        time.UnixMilli(v.LastUpdateTimestamp),
	}
	if v.Version >= txnValueFlexVersion {
		s.lastProducerID = v.PreviousProducerID
		s.nextProducerID = v.NextProducerID
		s.version = v.ClientTransactionVersion
	}
	if v.StartTimestamp >= 0 {
		s.start = time.UnixMilli(v.StartTimestamp)
	}
	var tps []model.TopicPartition
	for _, t := range v.Topics {
		topic := string([]byte(t.Topic))
		for _, p := range t.Partitions {
			tps = append(tps, model.TopicPartition{Topic: topic, Partition: p})
		}
	}
	s.partitions = (&txnState{}).withPartitions(tps)
	return s
}

// buildBatch encodes one record (value nil for a tombstone) as an
// uncompressed batch with offset 0: the log assigns the real one.
func buildBatch(key, value []byte, now time.Time) ([]byte, error) {
	b := record.Batch{
		ProducerID:    record.NoProducerID,
		ProducerEpoch: record.NoProducerEpoch,
		BaseSequence:  record.NoSequence,
		Records:       []record.Record{{Timestamp: now.UnixMilli(), Key: key, Value: value}},
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		return nil, fmt.Errorf("txn: build batch: %w", err)
	}
	return out, nil
}

// keyVersion reads the version that starts every __transaction_state key.
func keyVersion(key []byte) (int16, bool) {
	if len(key) < 2 {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(key)), true
}
