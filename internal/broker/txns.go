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
	"github.com/twmb/franz-go/pkg/kmsg"
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
		WriteMarkers:     b.writeMarkers,
		GroupPartition:   func(id string) int32 { return group.PartitionFor(id, offsetsPartitions) },
		TopicExists:      b.topicExists,
		CoordinatorEpoch: b.coordinatorEpoch,
		Clock:            b.cfg.Clock,
		Logger:           b.cfg.Logger,
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

// writeMarkers ends a transaction on each partition, as Kafka's
// transaction marker channel does: the partitions this broker leads get
// their marker here (writeMarker), the others in one WriteTxnMarkers
// request per leader, over the inter-broker listener. A partition whose
// leader is unknown, or whose leader refuses (NOT_LEADER_OR_FOLLOWER after
// a failover, NOT_ENOUGH_REPLICAS), is an error: the coordinator writes
// the same markers again later, and a marker written twice closes nothing
// the second time.
func (b *Broker) writeMarkers(ctx context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, partitions []model.TopicPartition) error {
	img := b.meta.Load()
	byLeader := map[model.NodeID][]model.TopicPartition{}
	var errs []error
	for _, tp := range partitions {
		t, ok := img.Topic(tp.Topic)
		switch {
		case !ok:
			continue // deleted since: nothing to end there
		case int(tp.Partition) >= len(t.Partitions) || tp.Partition < 0:
			errs = append(errs, fmt.Errorf("broker: marker on %s: %w", tp, kerr.UnknownTopicOrPartition))
		case t.Partitions[tp.Partition].Leader < 0:
			errs = append(errs, fmt.Errorf("broker: marker on %s: %w", tp, kerr.LeaderNotAvailable))
		default:
			leader := t.Partitions[tp.Partition].Leader
			byLeader[leader] = append(byLeader[leader], tp)
		}
	}
	for leader, tps := range byLeader {
		if int32(leader) == b.cfg.NodeID {
			for _, tp := range tps {
				errs = append(errs, b.writeMarker(ctx, producerID, producerEpoch, commit, coordinatorEpoch, tp))
			}
			continue
		}
		errs = append(errs, b.sendMarkers(ctx, leader, producerID, producerEpoch, commit, coordinatorEpoch, tps))
	}
	return errors.Join(errs...)
}

// sendMarkers asks another broker to write markers on the partitions it
// leads (WriteTxnMarkers v1).
func (b *Broker) sendMarkers(ctx context.Context, leader model.NodeID, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, tps []model.TopicPartition) error {
	addr := b.leaderAddr(leader)
	if addr == "" {
		return fmt.Errorf("broker: markers for broker %d: %w: no inter-broker endpoint", leader, kerr.LeaderNotAvailable)
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = producerID, producerEpoch, commit, coordinatorEpoch
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(m.Topics)
			byTopic[tp.Topic] = i
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic = tp.Topic
			m.Topics = append(m.Topics, mt)
		}
		m.Topics[i].Partitions = append(m.Topics[i].Partitions, tp.Partition)
	}
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	raw, err := b.peers.request(ctx, addr, req)
	if err != nil {
		return fmt.Errorf("broker: markers to broker %d: %w", leader, err)
	}
	var errs []error
	for _, rm := range raw.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 && rp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
					errs = append(errs, fmt.Errorf("broker: marker on %s-%d at broker %d: %w", rt.Topic, rp.Partition, leader, kerr.ErrorForCode(rp.ErrorCode)))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// writeMarker appends one marker as the partition's leader and waits, as
// Kafka's acks=-1 marker append does, until it is on every ISR member
// (appendCommitted). A marker on __consumer_offsets also makes the group
// coordinator apply or drop the transaction's offsets; it is in the log
// once appended, so that happens even if the wait then fails.
func (b *Broker) writeMarker(ctx context.Context, producerID int64, producerEpoch int16, commit bool, coordinatorEpoch int32, tp model.TopicPartition) error {
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
	var appended func()
	if tp.Topic == group.OffsetsTopic {
		appended = func() { b.groups.CompleteTransaction(tp.Partition, producerID, producerEpoch, commit) }
	}
	return appendCommitted(ctx, ts, p, data, appended)
}
