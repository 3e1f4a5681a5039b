package txn

import (
	"context"
	"io"
	"log/slog"
	"math"
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

// FuzzLoad loads a __transaction_state partition of arbitrary bytes (as
// Kafka or a damaged disk may have left it) and then serves every API on
// what it loaded: the load may fail, but nothing may panic, and whatever
// loaded must stand up to InitProducerID, AddPartitionsToTxn, EndTxn and
// the admin APIs.
func FuzzLoad(f *testing.F) {
	now := time.UnixMilli(1_000_000)
	tps := []model.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 3}}
	var all []byte
	for _, st := range []txnState{
		{producerID: 5, producerEpoch: 0, state: stateEmpty, timeout: time.Minute, lastUpdate: now},
		{producerID: 6, producerEpoch: 2, state: stateOngoing, timeout: time.Minute, partitions: tps, start: now, lastUpdate: now},
		{producerID: 7, producerEpoch: 3, state: statePrepareCommit, timeout: time.Minute, partitions: tps, start: now, lastUpdate: now},
		{producerID: 8, producerEpoch: math.MaxInt16 - 1, state: statePrepareAbort, timeout: time.Minute, partitions: tps, start: now, lastUpdate: now,
			version: transactionVersionTV2, lastProducerID: 3, nextProducerID: 9},
		{producerID: 10, producerEpoch: 1, state: stateCompleteCommit, timeout: time.Minute, lastUpdate: now, version: transactionVersionTV2},
	} {
		id := "txn-" + kmsg.TransactionState(st.state).String()
		b, err := buildBatch(txnKey(id), txnValue(&st), now)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		all = append(all, b...)
	}
	f.Add(all)
	tomb, _ := buildBatch(txnKey("txn-Empty"), nil, now)
	f.Add(append(all, tomb...))
	zstd := record.Batch{Codec: record.CodecZstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Records: []record.Record{{Key: txnKey("z"), Value: txnValue(&txnState{producerID: 11, state: stateOngoing, partitions: tps})}}}
	if b, err := zstd.AppendTo(nil); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, loaded []byte) {
		log := fuzzLog{MemLog: NewMemLog(), loaded: loaded}
		cfg := DefaultConfig()
		cfg.NumPartitions = 1
		nextPID := int64(1000)
		c := New(cfg, Deps{
			Log: log,
			AllocateProducerID: func(context.Context) (int64, error) {
				nextPID++
				return nextPID, nil
			},
			WriteMarkers: func(context.Context, int64, int16, bool, int32, []model.TopicPartition) error { return nil },
			Clock:        clock.NewManual(now.Add(time.Second)),
			Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		defer c.Stop()
		if err := c.Load(context.Background(), 0); err != nil {
			return
		}
		c.recovering.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list := c.ListTransactions(kmsg.NewPtrListTransactionsRequest())
		for _, ts := range list.TransactionStates {
			id := ts.TransactionalID
			dr := kmsg.NewPtrDescribeTransactionsRequest()
			dr.TransactionalIDs = []string{id}
			c.DescribeTransactions(dr)
			ip := kmsg.NewPtrInitProducerIDRequest()
			ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = 5, &id, 60000
			ipr := c.InitProducerID(ctx, ip)
			ap := kmsg.NewPtrAddPartitionsToTxnRequest()
			ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, id, ipr.ProducerID, ipr.ProducerEpoch
			ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{1}}}
			c.AddPartitionsToTxn(ap)
			et := kmsg.NewPtrEndTxnRequest()
			et.Version, et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = 4, id, ipr.ProducerID, ipr.ProducerEpoch, true
			c.EndTxn(ctx, et)
			et.ProducerID, et.ProducerEpoch = ts.ProducerID, 0
			c.EndTxn(ctx, et)
		}
	})
}
