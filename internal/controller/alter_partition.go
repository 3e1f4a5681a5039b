package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// ISRChange is one partition of an AlterPartition request: the leader's
// proposed ISR at the epochs it holds (KIP-497).
type ISRChange struct {
	TopicID        model.TopicID
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []model.NodeID
}

// ISRChangeResult is the partition's state after the request, or why not.
type ISRChangeResult struct {
	Err            *kerr.Error
	Leader         model.NodeID
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []model.NodeID
}

// AlterPartition commits ISR changes proposed by a partition leader. Each
// is refused unless the sender is the current leader at its broker epoch
// and the leader and partition epochs are current (a stale proposal must
// not undo a newer change): FENCED_LEADER_EPOCH for an old leader epoch,
// NOT_LEADER_OR_FOLLOWER when the sender does not lead, INVALID_UPDATE_VERSION
// for an old partition epoch, INELIGIBLE_REPLICA for a new member that is
// fenced, shutting down, on an offline log directory or not a replica. The valid ones commit as one batch.
// An ISR that holds every replica a reassignment adds completes it
// (NEW_LEADER_ELECTED when that moves leadership off the sender).
func (c *Controller) AlterPartition(ctx context.Context, broker model.NodeID, brokerEpoch int64, changes []ISRChange) ([]ISRChangeResult, *kerr.Error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return nil, kerr.NotController
	}
	img := c.Image()
	if b, ok := img.Broker(broker); !ok || b.Epoch != brokerEpoch {
		return nil, kerr.StaleBrokerEpoch
	}
	out := make([]ISRChangeResult, len(changes))
	var recs []metadata.Record
	var idx []int
	for i, ch := range changes {
		t, ok := img.TopicByID(ch.TopicID)
		if !ok || ch.Partition < 0 || int(ch.Partition) >= len(t.Partitions) {
			out[i].Err = kerr.UnknownTopicOrPartition
			continue
		}
		p := t.Partitions[ch.Partition]
		out[i] = ISRChangeResult{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.ISR}
		switch {
		case p.Leader != broker:
			out[i].Err = kerr.NotLeaderForPartition
		case ch.LeaderEpoch < p.LeaderEpoch:
			out[i].Err = kerr.FencedLeaderEpoch
		case ch.LeaderEpoch > p.LeaderEpoch:
			out[i].Err = kerr.UnknownLeaderEpoch
		case ch.PartitionEpoch != p.PartitionEpoch:
			out[i].Err = kerr.InvalidUpdateVersion
		case !slices.Contains(ch.ISR, broker):
			out[i].Err = kerr.InvalidRequest
		}
		if out[i].Err != nil {
			continue
		}
		for _, id := range ch.ISR {
			if !slices.Contains(p.Replicas, id) || (!slices.Contains(p.ISR, id) && (!c.usable(img, id) || !img.ReplicaOnline(p, id))) {
				out[i].Err = kerr.IneligibleReplica
			}
		}
		if out[i].Err != nil || slices.Equal(ch.ISR, p.ISR) {
			continue
		}
		// The ISR change may complete a reassignment in progress, as in
		// Kafka's PartitionChangeBuilder: the same record drops the
		// removing replicas and, if the sender is one, moves leadership.
		target := partitionTarget{replicas: p.Replicas, isr: ch.ISR, adding: p.AddingReplicas, removing: p.RemovingReplicas}
		rec := changeTo(ch.TopicID, p, target, func(id model.NodeID) bool { return c.usable(img, id) })
		if rec.AddingReplicas != nil || rec.RemovingReplicas != nil { // only completion changes them here
			c.log.Info("an ISR change completes the partition reassignment", "partition", model.TopicPartition{Topic: t.Name, Partition: p.Partition}.String(),
				"replicas", fmt.Sprint(rec.Replicas), "isr", fmt.Sprint(rec.ISR))
		}
		recs = append(recs, *rec)
		idx = append(idx, i)
	}
	if len(recs) > 0 {
		if err := c.proposeLocked(ctx, recs); err != nil {
			f := proposeFailure(err)
			for _, i := range idx {
				out[i].Err = f.err
			}
			return out, nil
		}
		img = c.Image()
		for _, i := range idx {
			t, _ := img.TopicByID(changes[i].TopicID)
			p := t.Partitions[changes[i].Partition]
			out[i] = ISRChangeResult{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.ISR}
			if p.Leader != broker {
				// Committed, but the completed reassignment moved the
				// leadership away: the sender must learn it from the
				// metadata (Kafka answers the same; FENCED_LEADER_EPOCH
				// to versions below 2).
				out[i].Err = kerr.NewLeaderElected
			}
		}
	}
	return out, nil
}
