package controller

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// ElectionType is the kind of election ElectLeaders runs (KIP-460), with
// Kafka's wire values.
type ElectionType int8

const (
	// ElectPreferred moves leadership to the preferred replica, the first
	// of the replica list, when it is in the ISR and usable.
	ElectPreferred ElectionType = 0
	// ElectUnclean gives a partition without a leader one: an ISR member if
	// one is usable, else any usable replica, which loses what the ISR had
	// and it lacks.
	ElectUnclean ElectionType = 1
)

// ElectTopic names partitions of one topic for ElectLeaders.
type ElectTopic struct {
	Topic      string
	Partitions []int32
}

// ElectTopicResult is one topic's outcomes, in the order asked.
type ElectTopicResult struct {
	Topic      string
	Partitions []ElectPartitionResult
}

// ElectPartitionResult is one partition's outcome; Err is nil when the
// partition got a new leader.
type ElectPartitionResult struct {
	Partition int32
	Err       *kerr.Error
	Message   string
}

// ElectLeaders runs preferred or unclean elections (the ElectLeaders API,
// KIP-183, KIP-460) and commits the new leaders as one batch. topics nil
// means every partition of every topic; then, as in Kafka's controller,
// the partitions that need no election are left out of the results. The
// error, with its message, is the whole request's: INVALID_REQUEST for an
// election type Kafka does not know, NOT_CONTROLLER, REQUEST_TIMED_OUT.
//
// An unclean election here is the operator's explicit choice, so it does
// not depend on unclean.leader.election.enable, as in Kafka.
func (c *Controller) ElectLeaders(ctx context.Context, typ ElectionType, topics []ElectTopic) ([]ElectTopicResult, *kerr.Error, string) {
	if typ != ElectPreferred && typ != ElectUnclean {
		return nil, kerr.InvalidRequest, fmt.Sprintf("Unknown election type %d", typ)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		f := proposeFailure(err)
		return nil, f.err, f.msg
	}
	img := c.Image()
	results, changes := planElections(img, typ, topics, func(id model.NodeID) bool { return c.usable(img, id) })
	if len(changes) == 0 {
		return results, nil, ""
	}
	recs := make([]metadata.Record, len(changes))
	for i, ch := range changes {
		recs[i] = ch.record
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		f := proposeFailure(err)
		return nil, f.err, f.msg
	}
	for _, ch := range changes {
		c.logElection(ch, typ)
	}
	return results, nil, ""
}

func (c *Controller) logElection(ch plannedElection, typ ElectionType) {
	tp := model.TopicPartition{Topic: ch.topic, Partition: ch.before.Partition}.String()
	if ch.unclean {
		c.log.Warn("unclean leader election: an out-of-sync replica leads; records the old ISR had and it lacks are lost",
			"partition", tp, "leader", *ch.record.Leader, "old_isr", fmt.Sprint(ch.before.ISR), "old_leader_epoch", ch.before.LeaderEpoch)
		return
	}
	kind := "preferred"
	if typ == ElectUnclean {
		kind = "unclean (clean from the ISR)"
	}
	c.log.Info("leader elected", "election", kind, "partition", tp, "leader", *ch.record.Leader, "old_leader", ch.before.Leader)
}

// plannedElection is one partition change ElectLeaders commits.
type plannedElection struct {
	topic   string
	before  metadata.PartitionImage
	record  metadata.PartitionChange
	unclean bool // an out-of-sync replica leads
}

// planElections decides ElectLeaders against an image, given which brokers
// may lead: each named partition's result, and the changes to commit. A
// partition named twice is decided once.
func planElections(img *metadata.Image, typ ElectionType, topics []ElectTopic, usable func(model.NodeID) bool) ([]ElectTopicResult, []plannedElection) {
	all := topics == nil
	if all {
		for _, t := range img.Topics() {
			et := ElectTopic{Topic: t.Name}
			for _, p := range t.Partitions {
				et.Partitions = append(et.Partitions, p.Partition)
			}
			topics = append(topics, et)
		}
	}
	var changes []plannedElection
	decided := map[model.TopicPartition]ElectPartitionResult{}
	results := make([]ElectTopicResult, 0, len(topics))
	for _, et := range topics {
		tr := ElectTopicResult{Topic: et.Topic, Partitions: []ElectPartitionResult{}}
		for _, part := range et.Partitions {
			tp := model.TopicPartition{Topic: et.Topic, Partition: part}
			r, seen := decided[tp]
			if !seen {
				var ch *plannedElection
				r, ch = planElection(img, tp, typ, usable)
				decided[tp] = r
				if ch != nil {
					changes = append(changes, *ch)
				}
			}
			if all && r.Err == kerr.ElectionNotNeeded {
				continue
			}
			tr.Partitions = append(tr.Partitions, r)
		}
		results = append(results, tr)
	}
	return results, changes
}

// planElection decides one partition, Kafka's way. PREFERRED: already led
// by its preferred replica, ELECTION_NOT_NEEDED; the preferred replica in
// the ISR and usable, it leads; else PREFERRED_LEADER_NOT_AVAILABLE, unless
// the partition has no usable leader and a usable ISR member can take it
// (Kafka's preferred election falls back to a clean one then). UNCLEAN: a
// usable leader, ELECTION_NOT_NEEDED; else the first usable ISR member in
// replica order, else the first usable replica with an ISR of itself; else
// ELIGIBLE_LEADERS_NOT_AVAILABLE.
func planElection(img *metadata.Image, tp model.TopicPartition, typ ElectionType, usable func(model.NodeID) bool) (ElectPartitionResult, *plannedElection) {
	r := ElectPartitionResult{Partition: tp.Partition}
	p, ok := img.Partition(tp)
	if !ok {
		if _, known := img.Topic(tp.Topic); !known {
			r.Err, r.Message = kerr.UnknownTopicOrPartition, fmt.Sprintf("No such topic as %s", tp.Topic)
		} else {
			r.Err, r.Message = kerr.UnknownTopicOrPartition, fmt.Sprintf("No such partition as %s", tp)
		}
		return r, nil
	}
	t, _ := img.Topic(tp.Topic)
	led := p.Leader != metadata.NoLeader && usable(p.Leader)
	inSync := func(id model.NodeID) bool { return slices.Contains(p.ISR, id) && usable(id) }
	leader, unclean := metadata.NoLeader, false
	switch typ {
	case ElectPreferred:
		if len(p.Replicas) == 0 {
			r.Err, r.Message = kerr.PreferredLeaderNotAvailable, "The partition has no replicas."
			return r, nil
		}
		preferred := p.Replicas[0]
		switch {
		case p.Leader == preferred:
			r.Err = kerr.ElectionNotNeeded
			return r, nil
		case inSync(preferred):
			leader = preferred
		case !led:
			leader = firstOf(p.Replicas, inSync)
		}
		if leader == metadata.NoLeader {
			r.Err, r.Message = kerr.PreferredLeaderNotAvailable, preferredUnavailable(img, p, usable)
			return r, nil
		}
	case ElectUnclean:
		if led {
			r.Err = kerr.ElectionNotNeeded
			return r, nil
		}
		if leader = firstOf(p.Replicas, inSync); leader == metadata.NoLeader {
			leader, unclean = firstOf(p.Replicas, usable), true
		}
		if leader == metadata.NoLeader {
			r.Err, r.Message = kerr.EligibleLeadersNotAvailable, fmt.Sprintf("No replica of %s is alive and unfenced: replicas %v.", tp, p.Replicas)
			return r, nil
		}
	}
	ch := metadata.PartitionChange{TopicID: t.ID, Partition: p.Partition, Leader: &leader}
	if unclean {
		ch.ISR = []model.NodeID{leader}
	}
	return r, &plannedElection{topic: tp.Topic, before: p, record: ch, unclean: unclean}
}

// firstOf is the first of ids that ok accepts, or NoLeader.
func firstOf(ids []model.NodeID, ok func(model.NodeID) bool) model.NodeID {
	for _, id := range ids {
		if ok(id) {
			return id
		}
	}
	return metadata.NoLeader
}

// preferredUnavailable says why a partition's preferred replica cannot lead.
func preferredUnavailable(img *metadata.Image, p metadata.PartitionImage, usable func(model.NodeID) bool) string {
	preferred := p.Replicas[0]
	b, registered := img.Broker(preferred)
	switch {
	case !registered:
		return fmt.Sprintf("The preferred leader %d is not registered.", preferred)
	case b.Fenced:
		return fmt.Sprintf("The preferred leader %d is fenced.", preferred)
	case !usable(preferred):
		return fmt.Sprintf("The preferred leader %d is shutting down.", preferred)
	}
	return fmt.Sprintf("The preferred leader %d is not in the ISR %v.", preferred, p.ISR)
}
