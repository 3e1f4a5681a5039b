package group

import "time"

// streamsReplay is what a partition holds of a streams group.
type streamsReplay struct {
	meta     *streamsMetadataValue
	topology *streamsTopology
	// assignmentEpoch is the target's epoch.
	assignmentEpoch int32
	members         map[string]*streamsMember
	targets         map[string]streamsTasks
	current         map[string]*streamsCurrentValue
	// seq is the number of the group's last metadata record.
	seq int
}

// applyStreams folds a streams group record (key types 17-23) into the
// state.
func (r *replayState) applyStreams(keyType int16, key, value []byte) error {
	groupID, memberID, err := readConsumerKey(key, streamsPerMember(keyType))
	if err != nil {
		return err
	}
	if r.streams == nil {
		r.streams = make(map[string]*streamsReplay)
	}
	sr := r.streams[groupID]
	if sr == nil {
		if value == nil {
			return nil
		}
		sr = &streamsReplay{
			members: make(map[string]*streamsMember),
			targets: make(map[string]streamsTasks),
			current: make(map[string]*streamsCurrentValue),
		}
		r.streams[groupID] = sr
	}
	switch keyType {
	case streamsGroupMetadataKeyType:
		if value == nil {
			delete(r.streams, groupID)
			return nil
		}
		v, err := decodeStreamsMetadataValue(value)
		if err != nil {
			return err
		}
		sr.meta, sr.seq = v, r.seq
	case streamsGroupTopologyKeyType:
		if value == nil {
			sr.topology = nil
			return nil
		}
		t, err := decodeStreamsTopology(value)
		if err != nil {
			return err
		}
		sr.topology = t
	case streamsGroupTargetMetadataKeyType:
		if value == nil {
			sr.assignmentEpoch = 0
			return nil
		}
		epoch, err := decodeTargetEpochValue(value)
		if err != nil {
			return err
		}
		sr.assignmentEpoch = epoch
	case streamsGroupMemberMetadataKeyType:
		if value == nil {
			delete(sr.members, memberID)
			return nil
		}
		m, err := decodeStreamsMember(memberID, value)
		if err != nil {
			return err
		}
		sr.members[memberID] = m
	case streamsGroupTargetMemberKeyType:
		if value == nil {
			delete(sr.targets, memberID)
			return nil
		}
		t, err := decodeStreamsTarget(value)
		if err != nil {
			return err
		}
		sr.targets[memberID] = t
	case streamsGroupCurrentMemberKeyType:
		if value == nil {
			delete(sr.current, memberID)
			return nil
		}
		v, err := decodeStreamsCurrent(value)
		if err != nil {
			return err
		}
		sr.current[memberID] = v
	}
	return nil
}

// streamsWins reports whether a group ID's streams records came after its
// classic ones (a conversion whose tombstones were lost).
func (r *replayState) streamsWins(id string) bool {
	sr := r.streams[id]
	return sr != nil && sr.meta != nil && sr.seq > r.classicSeq[id]
}

// load restores a streams group: epochs, topology, members with their
// current tasks, and targets. Members must heartbeat within a session
// timeout from the load; a member that was revoking gets its rebalance
// timeout again.
func (g *streamsGroup) load(sr *streamsReplay, now time.Time, cfg *Config) {
	g.epoch, g.metadataHash = sr.meta.epoch, sr.meta.metadataHash
	g.validatedTopologyEpoch, g.assignmentConfigs = sr.meta.validatedTopologyEpoch, sr.meta.assignmentConfigs
	g.assignmentEpoch, g.topology = sr.assignmentEpoch, sr.topology
	for _, id := range sortedKeys(sr.members) {
		m := sr.members[id]
		m.state = memberStable
		m.sessionDeadline = now.Add(cfg.Streams.SessionTimeout)
		if cur := sr.current[id]; cur != nil {
			m.epoch, m.previousEpoch, m.state = cur.epoch, cur.previousEpoch, cur.state
			m.assigned, m.pendingRevocation = cur.assigned, cur.pending
			switch m.state {
			case memberStable, memberUnreleased:
			case memberUnrevoked:
				m.revocationDeadline = now.Add(m.rebalanceTimeout)
			default:
				m.state = memberUnknown
			}
		}
		g.replaceMember(nil, m)
		if t, ok := sr.targets[id]; ok {
			g.target[id] = t
		}
	}
}
