package group

import "slices"

// reconcile moves member m one step toward its target assignment, the way
// Kafka's CurrentAssignmentBuilder does, and returns the member as it is
// after the step: m itself when nothing changes. owned are the partitions
// the member reports owning (nil: it did not say, and is assumed to still
// own whatever it was asked to revoke).
//
//   - A stable member behind the target epoch computes its next assignment.
//   - A member revoking partitions (memberUnrevoked) stays at its epoch until
//     it no longer reports them owned; then it moves on, to the next epoch.
//   - A member waiting for partitions other members still own
//     (memberUnreleased) takes those that are free now.
//
// The next assignment keeps the assigned partitions that are in the target,
// revokes the others, and adds the target's partitions nobody owns. If
// something must be revoked, nothing is added yet: the member stays at its
// epoch and is asked to revoke first. Otherwise it moves to the target
// epoch, stable, or unreleased when some of its target is still owned by
// another member. So no partition is ever assigned to two members at once.
//
// A member in a state only a newer Kafka writes is fenced (code
// FENCED_MEMBER_EPOCH) unless it owns nothing, in which case it is
// reconciled from scratch.
func (g *consumerGroup) reconcile(s *step, m *consumerMember, owned topicPartitions) (*consumerMember, int16) {
	rc := reconciler{g: g, m: m, owned: owned, subscribed: g.subscribedTopicIDs(s, m)}
	rc.targetEpoch, rc.target = g.assignmentEpoch, g.target[m.id]
	switch m.state {
	case memberStable:
		if m.epoch == rc.targetEpoch {
			return m, 0
		}
		return rc.next(m.epoch), 0
	case memberUnrevoked:
		if rc.ownsAny(m.pendingRevocation) {
			return m, 0
		}
		return rc.next(min(m.epoch+1, rc.targetEpoch)), 0
	case memberUnreleased:
		return rc.next(m.epoch), 0
	}
	if owned == nil || owned.count() > 0 {
		return m, codeFencedMemberEpoch
	}
	return rc.next(rc.targetEpoch), 0
}

type reconciler struct {
	g           *consumerGroup
	m           *consumerMember
	owned       topicPartitions
	subscribed  map[[16]byte]bool
	targetEpoch int32
	target      topicPartitions
}

// ownsAny reports whether the member may still own any of tps.
func (rc *reconciler) ownsAny(tps topicPartitions) bool {
	return rc.owned == nil || rc.owned.overlaps(tps)
}

// free reports whether a partition may be given to the member: nobody owns
// it, or the member itself does (it was revoking it, and the target gives
// it back).
func (rc *reconciler) free(tp tpID) bool {
	owner, ok := rc.g.owners[tp]
	return !ok || owner == rc.m.id
}

// next computes the member's next assignment; epoch is the epoch it stays
// at if it must revoke.
func (rc *reconciler) next(epoch int32) *consumerMember {
	m := rc.m
	var keep, revoke, add []tpID
	unreleased := false
	for _, t := range m.assigned.union(rc.target).topics() {
		var target []int32
		if rc.subscribed[t] {
			target = rc.target[t]
		}
		current := m.assigned[t]
		for _, p := range current {
			if _, ok := slices.BinarySearch(target, p); ok {
				keep = append(keep, tpID{t, p})
			} else {
				revoke = append(revoke, tpID{t, p})
			}
		}
		for _, p := range target {
			if _, ok := slices.BinarySearch(current, p); ok {
				continue
			}
			if tp := (tpID{t, p}); rc.free(tp) {
				add = append(add, tp)
			} else {
				unreleased = true
			}
		}
	}
	n := m.clone()
	revoking := partitionsOf(revoke)
	switch {
	case len(revoke) > 0 && rc.ownsAny(revoking):
		n.state = memberUnrevoked
		n.setEpoch(epoch)
		n.assigned, n.pendingRevocation = partitionsOf(keep), revoking
	default:
		n.state = memberStable
		if unreleased {
			n.state = memberUnreleased
		}
		n.setEpoch(rc.targetEpoch)
		n.assigned, n.pendingRevocation = partitionsOf(append(keep, add...)), nil
	}
	if n.sameAssignment(m) {
		return m
	}
	return n
}

// setEpoch moves the member to epoch, remembering the one it had: a member
// whose answer was lost may still come with it.
func (m *consumerMember) setEpoch(epoch int32) {
	if epoch != m.epoch {
		m.previousEpoch, m.epoch = m.epoch, epoch
	}
}
