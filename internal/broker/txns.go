package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/twmb/franz-go/pkg/kerr"
)

// startTxns builds the transaction coordinator over __transaction_state
// and starts loading it. The topic is created on the first
// FindCoordinator for a transactional ID, as Kafka does.
func (b *Broker) startTxns() {
	cfg := b.brokerConfig(b.meta.Load())
	offsetsPartitions := cfg.Int("offsets.topic.num.partitions")
	b.txns = txn.New(txn.ConfigFrom(cfg), txn.Deps{
		Log: b.coordinatorLog(cfg, txn.StateTopic),
		AllocateProducerID: func(ctx context.Context) (int64, error) {
			return b.producerIDs.take(ctx, b.allocateProducerIDs)
		},
		WriteMarkers:   b.writeMarkers,
		GroupPartition: func(id string) int32 { return group.PartitionFor(id, offsetsPartitions) },
		TopicExists:    b.topicExists,
		Clock:          b.cfg.Clock,
		Logger:         b.cfg.Logger,
	})
	b.txns.Start()
}

// ensureTxnStateTopic creates __transaction_state with the
// transaction.state.log.* settings.
func (b *Broker) ensureTxnStateTopic(ctx context.Context) error {
	cfg := b.brokerConfig(b.meta.Load())
	return b.ensureInternalTopic(ctx, txn.StateTopic, cfg.Int("transaction.state.log.num.partitions"),
		cfg.Int("transaction.state.log.replication.factor"), cfg.Int("transaction.state.log.segment.bytes"),
		map[string]string{"min.insync.replicas": fmt.Sprint(cfg.Int("transaction.state.log.min.isr"))})
}

// writeMarkers ends a transaction on each partition: a control batch (a
// commit or abort marker) from the producer, appended as leader, which
// closes the producer's open transaction there and, for an abort, enters
// it in the aborted-transaction index. A marker on __consumer_offsets also
// makes the group coordinator apply or drop the transaction's offsets.
func (b *Broker) writeMarkers(ctx context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, partitions []model.TopicPartition) error {
	var errs []error
	for _, tp := range partitions {
		errs = append(errs, b.writeMarker(producerID, producerEpoch, commit, coordinatorEpoch, tp))
	}
	return errors.Join(errs...)
}

func (b *Broker) writeMarker(producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, tp model.TopicPartition) error {
	ts, ok := b.topics.byTopicName(tp.Topic)
	if !ok {
		return nil // deleted since: nothing to end there
	}
	p, code := ts.partition(tp.Partition)
	if code != 0 {
		return kerr.ErrorForCode(code)
	}
	marker := record.EndTxnMarker(commit, coordinatorEpoch)
	marker.Timestamp = b.cfg.Clock.Now().UnixMilli()
	batch := record.Batch{
		Control: true, Transactional: true, ProducerID: producerID, ProducerEpoch: producerEpoch, BaseSequence: -1,
		Records: []record.Record{marker},
	}
	data, err := batch.AppendTo(nil)
	if err != nil {
		return err
	}
	if _, err := p.Append(data); err != nil {
		return fmt.Errorf("broker: marker on %s: %w", tp, err)
	}
	if tp.Topic == group.OffsetsTopic {
		b.groups.CompleteTransaction(tp.Partition, producerID, producerEpoch, commit)
	}
	return nil
}
