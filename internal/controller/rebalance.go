package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// brokerImbalance is one broker's leader imbalance: of the partitions that
// prefer it (it is their first replica), how many another broker leads, or
// nobody.
type brokerImbalance struct {
	broker       model.NodeID
	preferred    int
	ledElsewhere int
}

func (b brokerImbalance) String() string {
	return fmt.Sprintf("broker %d leads %d of the %d partitions that prefer it", b.broker, b.preferred-b.ledElsewhere, b.preferred)
}

// maxBalanceMoves bounds one rebalance's batch, as Kafka's controller bounds
// its elections per imbalance check: a restarted broker that prefers a
// hundred thousand partitions gets them back over several batches, each
// checked again against the image, not in one huge Raft entry.
const maxBalanceMoves = 1000

// rebalanceLeaders is the automatic preferred-leader election, decided as
// Kafka's controller does (auto.leader.rebalance.enable): a broker's
// imbalance is ledElsewhere/preferred; for every broker above percent (as
// leader.imbalance.per.broker.percentage, so 10 means "more than a tenth"),
// each partition that prefers it moves back to it when it is in the ISR
// and usable. Brokers at or below the percentage keep their imbalance: a
// few moves are not worth a leader change each, which costs clients a
// metadata refresh. It returns the moves (at most maxBalanceMoves; more
// reports that some were left for the next pass) and the brokers above
// the percentage, in broker order.
func rebalanceLeaders(img *metadata.Image, percent int, usable func(model.NodeID) bool) (moves []plannedElection, over []brokerImbalance, more bool) {
	type pref struct {
		topic *metadata.TopicImage
		p     metadata.PartitionImage
	}
	byBroker := map[model.NodeID][]pref{}
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if len(p.Replicas) > 0 {
				byBroker[p.Replicas[0]] = append(byBroker[p.Replicas[0]], pref{t, p})
			}
		}
	}
	for _, b := range slices.Sorted(maps.Keys(byBroker)) {
		parts := byBroker[b]
		im := brokerImbalance{broker: b, preferred: len(parts)}
		for _, pp := range parts {
			if pp.p.Leader != b {
				im.ledElsewhere++
			}
		}
		// ledElsewhere/preferred > percent/100, in integers.
		if im.ledElsewhere == 0 || im.ledElsewhere*100 <= percent*im.preferred {
			continue
		}
		over = append(over, im)
		if !usable(b) {
			continue
		}
		for _, pp := range parts {
			if pp.p.Leader == b || !slices.Contains(pp.p.ISR, b) {
				continue
			}
			if len(moves) == maxBalanceMoves {
				more = true
				break
			}
			leader := b
			moves = append(moves, plannedElection{topic: pp.topic.Name, before: pp.p,
				record: metadata.PartitionChange{TopicID: pp.topic.ID, Partition: pp.p.Partition, Leader: &leader}})
		}
	}
	return moves, over, more
}

// balanceSchedule says when the next leader-imbalance check is due: a full
// interval after this controller became active (its brokers may still be
// catching up), then every interval while it stays active. Pure: the time
// is given.
type balanceSchedule struct {
	interval time.Duration
	next     time.Time // zero while not active
}

func (s *balanceSchedule) due(now time.Time, active bool) bool {
	switch {
	case !active:
		s.next = time.Time{}
		return false
	case s.next.IsZero():
		s.next = now.Add(s.interval)
		return false
	case now.Before(s.next):
		return false
	}
	s.next = now.Add(s.interval)
	return true
}

// rerun makes the next check due at once: the last one left moves over.
func (s *balanceSchedule) rerun(now time.Time) { s.next = now }

// balanceLeaders runs one automatic rebalance on the active controller and
// commits its moves as one batch; more reports moves left for another.
func (c *Controller) balanceLeaders(ctx context.Context) (more bool, err error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return false, nil
	}
	img := c.Image()
	percent := int(c.static.Int("leader.imbalance.per.broker.percentage"))
	moves, over, more := rebalanceLeaders(img, percent, func(id model.NodeID) bool { return c.usable(img, id) })
	if len(moves) == 0 {
		return false, nil
	}
	recs := make([]metadata.Record, len(moves))
	for i, m := range moves {
		recs[i] = m.record
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		return false, err
	}
	for _, im := range over {
		c.log.Info("leader imbalance above leader.imbalance.per.broker.percentage: moving leadership back to the preferred replica",
			"imbalance", im.String(), "percentage", percent)
	}
	for _, m := range moves {
		c.log.Debug("leader elected", "election", "automatic preferred",
			"partition", model.TopicPartition{Topic: m.topic, Partition: m.before.Partition}.String(),
			"leader", *m.record.Leader, "old_leader", m.before.Leader)
	}
	return more, nil
}

// watchLeaderBalance checks leader imbalance every
// leader.imbalance.check.interval.seconds while this node is the active
// controller (auto.leader.rebalance.enable). The ticker only polls; the
// schedule runs on the controller's clock.
func (c *Controller) watchLeaderBalance(ctx context.Context) {
	s := balanceSchedule{interval: time.Duration(c.static.Long("leader.imbalance.check.interval.seconds")) * time.Second}
	tick := time.NewTicker(min(max(s.interval/10, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !s.due(c.clock.Now(), c.Active()) {
			continue
		}
		more, err := c.balanceLeaders(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.Warn("automatic leader rebalance failed", "err", err)
		}
		if more {
			s.rerun(c.clock.Now())
		}
	}
}
