package controller

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// ReassignTopic is one topic of an AlterPartitionReassignments request.
type ReassignTopic struct {
	Name       string
	Partitions []ReassignPartition
}

// ReassignPartition asks for a partition's replicas to become Replicas;
// nil Replicas cancels the reassignment in progress.
type ReassignPartition struct {
	Partition int32
	Replicas  []model.NodeID
}

// ReassignResult is one partition's outcome.
type ReassignResult struct {
	Topic        string
	Partition    int32
	ErrorCode    int16
	ErrorMessage string
}

// AlterPartitionReassignments starts, changes or cancels reassignments
// (KIP-455), as Kafka's ReplicationControlManager does, all valid
// partitions in one committed batch. Starting one makes the replicas the
// union of the target and the current replicas (target first), with the
// difference as adding and removing replicas; the new replicas then
// follow the leader, and the AlterPartition that brings the last of them
// into the ISR completes it (completeReassignment). A reassignment the ISR
// already satisfies (a reordering) completes at once. Cancelling goes
// back to the replicas before it, less the adding ones in the ISR.
//
// Errors: UNKNOWN_TOPIC_OR_PARTITION; INVALID_REPLICA_ASSIGNMENT for an
// empty list, a broker given twice or one not registered, or a cancel that
// needs an unclean election the topic does not allow;
// NO_REASSIGNMENT_IN_PROGRESS for a cancel with none; with
// allowRFChange false (KIP-860), INVALID_REPLICATION_FACTOR for a target
// whose size is not the partition's replica count (before the
// reassignment in progress, if any).
func (c *Controller) AlterPartitionReassignments(ctx context.Context, allowRFChange bool, topics []ReassignTopic) ([]ReassignResult, *kerr.Error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return nil, kerr.NotController
	}
	img := c.Image()
	acceptable := func(id model.NodeID) bool { return c.usable(img, id) }
	var results []ReassignResult
	var recs []metadata.Record
	var planned []int
	for _, t := range topics {
		for _, rp := range t.Partitions {
			rec, f := c.planReassignment(img, t.Name, rp, allowRFChange, acceptable)
			results = append(results, ReassignResult{Topic: t.Name, Partition: rp.Partition, ErrorCode: f.code(), ErrorMessage: f.message()})
			if f != nil {
				c.log.Info("unable to alter partition reassignment", "topic", t.Name, "partition", rp.Partition, "err", f.err, "message", f.msg)
				continue
			}
			if rec != nil {
				recs = append(recs, *rec)
				planned = append(planned, len(results)-1)
			}
		}
	}
	c.log.Info("altered partition reassignments", "changed", len(recs), "partitions", len(results))
	if len(recs) == 0 {
		return results, nil
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		f := proposeFailure(err)
		for _, i := range planned {
			results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message()
		}
	}
	return results, nil
}

// planReassignment is one partition of AlterPartitionReassignments: its
// change record (nil when nothing changes), or why not.
func (c *Controller) planReassignment(img *metadata.Image, topic string, rp ReassignPartition, allowRFChange bool, acceptable func(model.NodeID) bool) (*metadata.PartitionChange, *failure) {
	t, ok := img.Topic(topic)
	if !ok {
		return nil, fail(kerr.UnknownTopicOrPartition, "Unable to find a topic named %s.", topic)
	}
	if rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions) {
		return nil, fail(kerr.UnknownTopicOrPartition, "Unable to find partition %s:%d.", topic, rp.Partition)
	}
	p := t.Partitions[rp.Partition]
	if rp.Replicas == nil {
		if !p.Reassigning() {
			return nil, fail(kerr.NoReassignmentInProgress, "%s", kerr.NoReassignmentInProgress.Description)
		}
		unclean := uncleanElection(c.brokerValues(img), img.TopicConfig(topic))
		target, f := revertTarget(p, unclean)
		if f != nil {
			return nil, fail(f.err, "Unable to revert partition assignment for %s:%d because %s", topic, rp.Partition, f.msg)
		}
		return changeTo(t.ID, p, target, acceptable), nil
	}
	if f := checkReassignment(img, rp.Replicas); f != nil {
		return nil, f
	}
	if !allowRFChange {
		before := len(p.OriginalReplicas())
		if before != len(rp.Replicas) {
			return nil, fail(kerr.InvalidReplicationFactor, "The replication factor is changed from %d to %d", before, len(rp.Replicas))
		}
	}
	return changeTo(t.ID, p, startTarget(p, rp.Replicas), acceptable), nil
}

// checkReassignment checks a requested replica list as Kafka's
// validateManualPartitionAssignment does.
func checkReassignment(img *metadata.Image, replicas []model.NodeID) *failure {
	if len(replicas) == 0 {
		return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Sorted(slices.Values(replicas))
	for i, id := range sorted {
		if _, ok := img.Broker(id); !ok {
			return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	return nil
}

// partitionTarget is the state a change takes a partition to, before
// completion and election: Kafka's PartitionChangeBuilder targets.
type partitionTarget struct {
	replicas, isr, adding, removing []model.NodeID
}

// startTarget is the target of a new reassignment from p's replicas (all
// of them, when one is already in progress, as Kafka does) to target:
// the target first, then the replicas it removes.
func startTarget(p metadata.PartitionImage, target []model.NodeID) partitionTarget {
	removing := difference(p.Replicas, target)
	adding := difference(target, p.Replicas)
	replicas := append(slices.Clone(target), removing...)
	return partitionTarget{replicas: replicas, isr: p.ISR, adding: adding, removing: removing}
}

// revertTarget is the target of a cancelled reassignment, as Kafka's
// PartitionReassignmentRevert: the original replicas, the ISR less the
// adding replicas. An ISR of adding replicas only would need an unclean
// election: refused unless the topic allows one, which then takes the
// first original replica.
func revertTarget(p metadata.PartitionImage, unclean bool) (partitionTarget, *failure) {
	replicas := p.OriginalReplicas()
	isr := slices.DeleteFunc(slices.Clone(p.ISR), func(id model.NodeID) bool { return slices.Contains(p.AddingReplicas, id) })
	if len(isr) == 0 {
		if !unclean || len(replicas) == 0 {
			return partitionTarget{}, fail(kerr.InvalidReplicaAssignment, "it would require an unclean leader election.")
		}
		isr = replicas[:1:1]
	}
	return partitionTarget{replicas: replicas, isr: isr}, nil
}

// difference is a less b, sorted, as Kafka's TreeSet difference.
func difference(a, b []model.NodeID) []model.NodeID {
	var out []model.NodeID
	for _, id := range a {
		if !slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// completeReassignment completes a reassignment the target ISR allows, as
// Kafka's PartitionReassignmentReplicas.maybeCompleteReassignment: when
// the ISR without the removing replicas is not empty and holds every
// remaining replica, the replicas and ISR drop the removing ones and the
// reassignment ends.
func completeReassignment(t partitionTarget) partitionTarget {
	if len(t.adding) == 0 && len(t.removing) == 0 {
		return t
	}
	keep := func(ids []model.NodeID) []model.NodeID {
		return slices.DeleteFunc(slices.Clone(ids), func(id model.NodeID) bool { return slices.Contains(t.removing, id) })
	}
	isr, replicas := keep(t.isr), keep(t.replicas)
	if len(isr) == 0 || len(replicas) == 0 {
		return t
	}
	for _, r := range replicas {
		if !slices.Contains(isr, r) {
			return t
		}
	}
	return partitionTarget{replicas: replicas, isr: isr}
}

// changeTo is the record that takes p to the target, as Kafka's
// PartitionChangeBuilder.build with an online election: the reassignment
// completed if it can be, the leader kept if it is in the target ISR and
// usable, else the first target replica that is; nil when nothing
// changes. A dropped replica bumps the leader epoch when applied.
func changeTo(topicID model.TopicID, p metadata.PartitionImage, t partitionTarget, acceptable func(model.NodeID) bool) *metadata.PartitionChange {
	t = completeReassignment(t)
	valid := func(id model.NodeID) bool { return slices.Contains(t.isr, id) && acceptable(id) }
	leader := p.Leader
	if leader == metadata.NoLeader || !valid(leader) {
		leader = firstOf(t.replicas, valid)
	}
	ch := metadata.PartitionChange{TopicID: topicID, Partition: p.Partition}
	changed := false
	if leader != p.Leader {
		ch.Leader, changed = &leader, true
	}
	if !slices.Equal(t.isr, p.ISR) {
		ch.ISR, changed = slices.Clone(t.isr), true
	}
	if !slices.Equal(t.replicas, p.Replicas) {
		ch.Replicas, changed = slices.Clone(t.replicas), true
	}
	if !slices.Equal(t.adding, p.AddingReplicas) {
		a := slices.Clone(t.adding)
		ch.AddingReplicas, changed = &a, true
	}
	if !slices.Equal(t.removing, p.RemovingReplicas) {
		r := slices.Clone(t.removing)
		ch.RemovingReplicas, changed = &r, true
	}
	if !changed {
		return nil
	}
	return &ch
}

// OngoingReassignment is a partition being reassigned, as
// ListPartitionReassignments reports it.
type OngoingReassignment struct {
	Partition        int32
	Replicas         []model.NodeID
	AddingReplicas   []model.NodeID
	RemovingReplicas []model.NodeID
}

// ListPartitionReassignments lists the reassignments in progress in img:
// of every topic when topics is nil, else of the named partitions
// (unknown topics and partitions, and those not being reassigned, are
// left out, as Kafka does). The result is by topic name.
func ListPartitionReassignments(img *metadata.Image, topics map[string][]int32) map[string][]OngoingReassignment {
	out := map[string][]OngoingReassignment{}
	add := func(t *metadata.TopicImage, p metadata.PartitionImage) {
		if p.Reassigning() {
			out[t.Name] = append(out[t.Name], OngoingReassignment{Partition: p.Partition, Replicas: p.Replicas,
				AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas})
		}
	}
	if topics == nil {
		for _, t := range img.Topics() {
			for _, p := range t.Partitions {
				add(t, p)
			}
		}
		return out
	}
	for name, parts := range topics {
		t, ok := img.Topic(name)
		if !ok {
			continue
		}
		for _, i := range parts {
			if i >= 0 && int(i) < len(t.Partitions) {
				add(t, t.Partitions[i])
			}
		}
	}
	return out
}
