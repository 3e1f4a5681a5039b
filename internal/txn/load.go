package txn

import (
	"context"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxLoadBatchBytes bounds the decompressed size of one batch while
// loading; Kafka may have written compressed ones.
const maxLoadBatchBytes = 64 << 20

// replay rebuilds a partition's transactional IDs from its records. The
// last value of each key wins and a tombstone deletes it, so the result is
// the same whether or not the topic has been compacted.
func (c *Coordinator) replay(ctx context.Context, partition int32) ([]*txn, error) {
	latest := make(map[string]*txnState)
	bad := 0
	err := c.deps.Log.ReadAll(ctx, partition, func(batches []byte) error {
		return record.ForEachBatch(batches, func(batch []byte, h record.Header) error {
			if h.IsControl() {
				return nil
			}
			return record.Iterate(batch, maxLoadBatchBytes, func(rec *record.Record) bool {
				if !applyRecord(latest, rec.Key, rec.Value) {
					bad++
				}
				return true
			})
		})
	})
	if err != nil {
		return nil, err
	}
	if bad > 0 {
		c.log.Warn("records of __transaction_state not loaded", "partition", partition, "undecodable", bad)
	}
	out := make([]*txn, 0, len(latest))
	for id, st := range latest {
		if st.state == stateDead {
			continue
		}
		out = append(out, &txn{id: id, partition: partition, st: *st})
	}
	return out, nil
}

// applyRecord folds one record into latest, reporting false for a record
// that does not decode. key and value are valid only during the call.
func applyRecord(latest map[string]*txnState, key, value []byte) bool {
	if v, ok := keyVersion(key); !ok || v != txnKeyVersion {
		return false
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return false
	}
	if value == nil {
		delete(latest, k.TransactionalID)
		return true
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return false
	}
	st := stateFromValue(&v)
	if st.state == statePrepareEpochFence {
		// Kafka never writes it; should one appear, the fence it began
		// is finished as an abort.
		st.state = statePrepareAbort
	}
	latest[k.TransactionalID] = &st
	return true
}
