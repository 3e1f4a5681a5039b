package group

// reconcile moves a streams member one step toward its target, the way the
// consumer protocol does (consumer_reconcile.go): tasks that leave the
// member's target are revoked first, and only once the member no longer
// reports them owned does it get new ones; a task is given only when it is
// free:
//
//   - an active task when no other member owns it as active (assigned or
//     pending revocation), so two instances never process one task;
//   - a standby or warm-up task when no member of the same process owns it
//     as active, since the tasks of a process share one state directory.
//
// owned are the tasks the member reports owning (nil: it did not say, and
// is assumed to still own what it was asked to revoke).
func (g *streamsGroup) reconcile(m *streamsMember, owned *streamsTasks) (*streamsMember, int16) {
	rc := streamsReconciler{g: g, m: m, owned: owned, targetEpoch: g.assignmentEpoch, target: g.target[m.id]}
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

type streamsReconciler struct {
	g           *streamsGroup
	m           *streamsMember
	owned       *streamsTasks
	targetEpoch int32
	target      streamsTasks
}

func (rc *streamsReconciler) ownsAny(t streamsTasks) bool {
	return rc.owned == nil && t.count() > 0 || rc.owned != nil && rc.owned.overlaps(t)
}

// freeActive reports whether no other member owns t as active.
func (rc *streamsReconciler) freeActive(t taskID) bool {
	for id, o := range rc.g.members {
		if id != rc.m.id && (o.assigned.active.has(t) || o.pendingRevocation.active.has(t)) {
			return false
		}
	}
	return true
}

// freeStandby reports whether no member of the member's process (itself
// included) owns t as active.
func (rc *streamsReconciler) freeStandby(t taskID) bool {
	for _, o := range rc.g.members {
		if o.processID == rc.m.processID && (o.assigned.active.has(t) || o.pendingRevocation.active.has(t)) {
			return false
		}
	}
	return true
}

// next computes the member's next assignment; epoch is the one it stays at
// if it must revoke.
func (rc *streamsReconciler) next(epoch int32) *streamsMember {
	m := rc.m
	var keep, revoke, add [3][]taskID
	unreleased := false
	roles := func(t streamsTasks) [3]taskSet { return [3]taskSet{t.active, t.standby, t.warmup} }
	current, target := roles(m.assigned), roles(rc.target)
	for role := range 3 {
		for _, t := range current[role].list() {
			if target[role].has(t) {
				keep[role] = append(keep[role], t)
			} else {
				revoke[role] = append(revoke[role], t)
			}
		}
		for _, t := range target[role].list() {
			if current[role].has(t) {
				continue
			}
			free := rc.freeActive(t)
			if role != 0 {
				free = rc.freeStandby(t)
			}
			if free {
				add[role] = append(add[role], t)
			} else {
				unreleased = true
			}
		}
	}
	tasksOf := func(lists [3][]taskID) streamsTasks {
		return streamsTasks{active: taskSetOf(lists[0]), standby: taskSetOf(lists[1]), warmup: taskSetOf(lists[2])}
	}
	n := m.clone()
	revoking := tasksOf(revoke)
	switch {
	case revoking.count() > 0 && rc.ownsAny(revoking):
		n.state = memberUnrevoked
		n.setStreamsEpoch(epoch)
		n.assigned, n.pendingRevocation = tasksOf(keep), revoking
	default:
		n.state = memberStable
		if unreleased {
			n.state = memberUnreleased
		}
		n.setStreamsEpoch(rc.targetEpoch)
		for role := range 3 {
			keep[role] = append(keep[role], add[role]...)
		}
		n.assigned, n.pendingRevocation = tasksOf(keep), streamsTasks{}
	}
	if n.sameAssignment(m) {
		return m
	}
	return n
}

func (m *streamsMember) setStreamsEpoch(epoch int32) {
	if epoch != m.epoch {
		m.previousEpoch, m.epoch = m.epoch, epoch
	}
}
