package group

import (
	"slices"
	"time"
)

// shareReplay is what a partition holds of a share group.
type shareReplay struct {
	hasEpoch        bool
	epoch           int32
	metadataHash    int64
	assignmentEpoch int32
	members         map[string]*shareMemberValue
	targets         map[string]topicPartitions
	current         map[string]*shareCurrentValue
	initialized     map[[16]byte]initializedTopic
}

// applyShare folds a share group record (key types 10-15) into the state.
func (r *replayState) applyShare(keyType int16, key, value []byte) error {
	perMember := keyType == shareGroupMemberMetadataKeyType || keyType == shareGroupTargetMemberKeyType ||
		keyType == shareGroupCurrentMemberKeyType
	groupID, memberID, err := readConsumerKey(key, perMember)
	if err != nil {
		return err
	}
	sr := r.share[groupID]
	if sr == nil {
		if value == nil {
			return nil
		}
		sr = &shareReplay{
			members: make(map[string]*shareMemberValue),
			targets: make(map[string]topicPartitions),
			current: make(map[string]*shareCurrentValue),
		}
		r.share[groupID] = sr
	}
	switch keyType {
	case shareGroupMetadataKeyType:
		if value == nil {
			delete(r.share, groupID)
			return nil
		}
		sr.epoch, sr.metadataHash, err = decodeShareGroupMetadataValue(value)
		sr.hasEpoch = err == nil
	case shareGroupTargetMetadataKeyType:
		sr.assignmentEpoch = 0
		if value != nil {
			sr.assignmentEpoch, err = decodeTargetEpochValue(value)
		}
	case shareGroupStatePartitionMetadataKeyType:
		sr.initialized = nil
		if value != nil {
			sr.initialized, err = decodeShareStatePartitionValue(value)
		}
	case shareGroupMemberMetadataKeyType:
		delete(sr.members, memberID)
		if value != nil {
			var v *shareMemberValue
			if v, err = decodeShareMemberValue(value); err == nil {
				sr.members[memberID] = v
			}
		}
	case shareGroupTargetMemberKeyType:
		delete(sr.targets, memberID)
		if value != nil {
			var v topicPartitions
			if v, err = decodeTargetMemberValue(value); err == nil {
				sr.targets[memberID] = v
			}
		}
	case shareGroupCurrentMemberKeyType:
		delete(sr.current, memberID)
		if value != nil {
			var v *shareCurrentValue
			if v, err = decodeShareCurrentValue(value); err == nil {
				sr.current[memberID] = v
			}
		}
	}
	return err
}

// buildShareGroups builds the share groups replayed, except for group IDs
// another kind of group already took (a log that holds both kept only the
// kind Kafka would have let it: the other was deleted).
func (r *replayState) buildShareGroups(built map[string]bool, build func(id string) *group, now time.Time, cfg *Config) {
	for _, id := range sortedKeys(r.share) {
		sr := r.share[id]
		if !sr.hasEpoch || built[id] {
			continue
		}
		g := build(id)
		g.kind = protocolShare
		g.share.load(sr, now, cfg)
	}
}

// load restores a share group: epochs, members with their current
// assignments, targets and initialized partitions. Members have to
// heartbeat within their session timeout from now, as after a coordinator
// failover in Kafka.
func (g *shareGroup) load(sr *shareReplay, now time.Time, cfg *Config) {
	g.epoch, g.metadataHash, g.assignmentEpoch = sr.epoch, sr.metadataHash, sr.assignmentEpoch
	if sr.initialized != nil {
		g.initialized = sr.initialized
	}
	for _, id := range sortedKeys(sr.members) {
		mv := sr.members[id]
		m := &shareMember{
			id:               id,
			rackID:           stringOf(mv.rackID),
			clientID:         mv.clientID,
			clientHost:       mv.clientHost,
			subscribedTopics: slices.Compact(slices.Sorted(slices.Values(mv.subscribedTopics))),
			sessionDeadline:  now.Add(cfg.ShareSessionTimeout),
		}
		if cur := sr.current[id]; cur != nil {
			m.epoch, m.previousEpoch, m.assigned = cur.epoch, cur.previousEpoch, cur.assigned
		}
		g.replaceMember(nil, m)
		if t, ok := sr.targets[id]; ok {
			g.target[id] = t
		}
	}
}
