package group

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// KIP-1071's streams group records in __consumer_offsets, in Apache
// Kafka's formats (4.2/4.4's StreamsGroup*Key and *Value schemas). Keys are
// encoded as consumerKey encodes them: the int16 record type, the group ID
// and, for per-member records, the member ID. Values are version 0 and
// flexible. Type 18 (StreamsGroupPartitionMetadata, replaced by the
// metadata hash before Kafka 4.1) is skipped on load.
const (
	streamsGroupMetadataKeyType          = 17 // group epoch, metadata hash, validated topology epoch
	streamsGroupPartitionMetadataKeyType = 18 // not written
	streamsGroupMemberMetadataKeyType    = 19 // a member's metadata
	streamsGroupTargetMetadataKeyType    = 20 // target assignment epoch
	streamsGroupTargetMemberKeyType      = 21 // a member's target tasks
	streamsGroupCurrentMemberKeyType     = 22 // a member's epochs, state and tasks
	streamsGroupTopologyKeyType          = 23 // the topology
)

func streamsPerMember(keyType int16) bool {
	return keyType == streamsGroupMemberMetadataKeyType || keyType == streamsGroupTargetMemberKeyType ||
		keyType == streamsGroupCurrentMemberKeyType
}

// streamsMetadataValue is StreamsGroupMetadataValue v0: the epoch and the
// metadata hash, then tagged ValidatedTopologyEpoch (tag 0, default -1)
// and LastAssignmentConfigs (tag 1, nullable).
type streamsMetadataValue struct {
	epoch                  int32
	metadataHash           int64
	validatedTopologyEpoch int32
	assignmentConfigs      map[string]string
}

func (v *streamsMetadataValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendInt64(b, v.metadataHash)
	var tags int
	var tag0, tag1 []byte
	if v.validatedTopologyEpoch != -1 {
		tags++
		tag0 = kbin.AppendInt32(nil, v.validatedTopologyEpoch)
	}
	if v.assignmentConfigs != nil {
		tags++
		tag1 = kbin.AppendCompactArrayLen(nil, len(v.assignmentConfigs))
		for _, k := range sortedKeys(v.assignmentConfigs) {
			tag1 = kbin.AppendCompactString(tag1, k)
			tag1 = kbin.AppendCompactString(tag1, v.assignmentConfigs[k])
			tag1 = kbin.AppendUvarint(tag1, 0)
		}
	}
	b = kbin.AppendUvarint(b, uint32(tags))
	if tag0 != nil {
		b = kbin.AppendUvarint(b, 0)
		b = kbin.AppendUvarint(b, uint32(len(tag0)))
		b = append(b, tag0...)
	}
	if tag1 != nil {
		b = kbin.AppendUvarint(b, 1)
		b = kbin.AppendUvarint(b, uint32(len(tag1)))
		b = append(b, tag1...)
	}
	return b
}

func decodeStreamsMetadataValue(value []byte) (*streamsMetadataValue, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	v := &streamsMetadataValue{epoch: r.Int32(), metadataHash: r.Int64(), validatedTopologyEpoch: -1}
	var bad bool
	readTags(&r, func(tag uint32, data []byte) {
		tr := kbin.Reader{Src: data}
		switch tag {
		case 0:
			v.validatedTopologyEpoch = tr.Int32()
		case 1:
			n := tr.CompactArrayLen()
			if n >= 0 {
				v.assignmentConfigs = make(map[string]string)
			}
			for i := int32(0); i < n && tr.Ok(); i++ {
				k, val := tr.CompactString(), tr.CompactString()
				readTags(&tr, nil)
				v.assignmentConfigs[k] = val
			}
		default:
			return
		}
		bad = bad || tr.Complete() != nil
	})
	if bad {
		return nil, fmt.Errorf("%w: tagged field", errBadRecord)
	}
	return v, complete(&r)
}

// encodeStreamsTopology is StreamsGroupTopologyValue v0.
func encodeStreamsTopology(t *streamsTopology) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, t.epoch)
	b = kbin.AppendCompactArrayLen(b, len(t.subtopologies))
	for _, st := range t.subtopologies {
		b = kbin.AppendCompactString(b, st.id)
		b = appendCompactStrings(b, st.sourceTopics)
		b = appendCompactStrings(b, st.sourceRegex)
		b = appendTopicInfos(b, st.changelogs)
		b = appendCompactStrings(b, st.repartitionSinks)
		b = appendTopicInfos(b, st.repartitionSources)
		b = kbin.AppendCompactArrayLen(b, len(st.copartitionGroups))
		for _, cg := range st.copartitionGroups {
			b = appendInt16s(b, cg.sourceTopics)
			b = appendInt16s(b, cg.sourceRegex)
			b = appendInt16s(b, cg.repartitionSources)
			b = kbin.AppendUvarint(b, 0)
		}
		b = kbin.AppendUvarint(b, 0)
	}
	return kbin.AppendUvarint(b, 0)
}

func decodeStreamsTopology(value []byte) (*streamsTopology, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	t := &streamsTopology{epoch: r.Int32()}
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		st := subtopology{id: r.CompactString()}
		st.sourceTopics = readCompactStrings(&r)
		st.sourceRegex = readCompactStrings(&r)
		st.changelogs = readTopicInfos(&r)
		st.repartitionSinks = readCompactStrings(&r)
		st.repartitionSources = readTopicInfos(&r)
		ng := r.CompactArrayLen()
		for j := int32(0); j < ng && r.Ok(); j++ {
			cg := copartitionGroup{sourceTopics: readInt16s(&r), sourceRegex: readInt16s(&r), repartitionSources: readInt16s(&r)}
			readTags(&r, nil)
			st.copartitionGroups = append(st.copartitionGroups, cg)
		}
		readTags(&r, nil)
		t.subtopologies = append(t.subtopologies, st)
	}
	readTags(&r, nil)
	return t, complete(&r)
}

func appendCompactStrings(b []byte, ss []string) []byte {
	b = kbin.AppendCompactArrayLen(b, len(ss))
	for _, s := range ss {
		b = kbin.AppendCompactString(b, s)
	}
	return b
}

func readCompactStrings(r *kbin.Reader) []string {
	n := r.CompactArrayLen()
	var out []string
	for i := int32(0); i < n && r.Ok(); i++ {
		out = append(out, r.CompactString())
	}
	return out
}

func appendInt16s(b []byte, xs []int16) []byte {
	b = kbin.AppendCompactArrayLen(b, len(xs))
	for _, x := range xs {
		b = kbin.AppendInt16(b, x)
	}
	return b
}

func readInt16s(r *kbin.Reader) []int16 {
	n := r.CompactArrayLen()
	var out []int16
	for i := int32(0); i < n && r.Ok(); i++ {
		out = append(out, r.Int16())
	}
	return out
}

func appendTopicInfos(b []byte, infos []streamsTopicInfo) []byte {
	b = kbin.AppendCompactArrayLen(b, len(infos))
	for _, ti := range infos {
		b = kbin.AppendCompactString(b, ti.name)
		b = kbin.AppendInt32(b, ti.partitions)
		b = kbin.AppendInt16(b, ti.replication)
		b = kbin.AppendCompactArrayLen(b, len(ti.configs))
		for _, c := range ti.configs {
			b = kbin.AppendCompactString(b, c[0])
			b = kbin.AppendCompactString(b, c[1])
			b = kbin.AppendUvarint(b, 0)
		}
		b = kbin.AppendUvarint(b, 0)
	}
	return b
}

func readTopicInfos(r *kbin.Reader) []streamsTopicInfo {
	n := r.CompactArrayLen()
	var out []streamsTopicInfo
	for i := int32(0); i < n && r.Ok(); i++ {
		ti := streamsTopicInfo{name: r.CompactString(), partitions: r.Int32(), replication: r.Int16()}
		nc := r.CompactArrayLen()
		for j := int32(0); j < nc && r.Ok(); j++ {
			ti.configs = append(ti.configs, [2]string{r.CompactString(), r.CompactString()})
			readTags(r, nil)
		}
		readTags(r, nil)
		out = append(out, ti)
	}
	return out
}

// encodeStreamsMember is StreamsGroupMemberMetadataValue v0.
func encodeStreamsMember(m *streamsMember) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendCompactNullableString(b, nullable(m.instanceID))
	b = kbin.AppendCompactNullableString(b, nullable(m.rackID))
	b = kbin.AppendCompactString(b, m.clientID)
	b = kbin.AppendCompactString(b, m.clientHost)
	b = kbin.AppendInt32(b, int32(m.rebalanceTimeout.Milliseconds()))
	b = kbin.AppendInt32(b, m.topologyEpoch)
	b = kbin.AppendCompactString(b, m.processID)
	if m.endpoint == nil {
		b = kbin.AppendInt8(b, -1)
	} else {
		b = kbin.AppendInt8(b, 1)
		b = kbin.AppendCompactString(b, m.endpoint.host)
		b = kbin.AppendUint16(b, m.endpoint.port)
		b = kbin.AppendUvarint(b, 0)
	}
	b = kbin.AppendCompactArrayLen(b, len(m.clientTags))
	for _, kv := range m.clientTags {
		b = kbin.AppendCompactString(b, kv[0])
		b = kbin.AppendCompactString(b, kv[1])
		b = kbin.AppendUvarint(b, 0)
	}
	return kbin.AppendUvarint(b, 0)
}

// decodeStreamsMember reads a member's metadata into a member with
// nothing assigned.
func decodeStreamsMember(id string, value []byte) (*streamsMember, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	m := &streamsMember{id: id}
	m.instanceID, m.rackID = stringOf(r.CompactNullableString()), stringOf(r.CompactNullableString())
	m.clientID, m.clientHost = r.CompactString(), r.CompactString()
	m.rebalanceTimeout = msDuration(r.Int32())
	m.topologyEpoch = r.Int32()
	m.processID = r.CompactString()
	if r.Int8() >= 0 {
		m.endpoint = &streamsEndpoint{host: r.CompactString(), port: r.Uint16()}
		readTags(&r, nil)
	}
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		m.clientTags = append(m.clientTags, [2]string{r.CompactString(), r.CompactString()})
		readTags(&r, nil)
	}
	readTags(&r, nil)
	return m, complete(&r)
}

// encodeStreamsTarget is StreamsGroupTargetAssignmentMemberValue v0.
func encodeStreamsTarget(t streamsTasks) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = appendTaskSet(b, t.active)
	b = appendTaskSet(b, t.standby)
	b = appendTaskSet(b, t.warmup)
	return kbin.AppendUvarint(b, 0)
}

func decodeStreamsTarget(value []byte) (streamsTasks, error) {
	r, err := valueReader(value)
	if err != nil {
		return streamsTasks{}, err
	}
	t := streamsTasks{active: readTaskSet(&r), standby: readTaskSet(&r), warmup: readTaskSet(&r)}
	readTags(&r, nil)
	return t, complete(&r)
}

// streamsCurrentValue is StreamsGroupCurrentMemberAssignmentValue v0.
type streamsCurrentValue struct {
	epoch, previousEpoch int32
	state                memberState
	assigned, pending    streamsTasks
}

func (v *streamsCurrentValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendInt32(b, v.previousEpoch)
	b = kbin.AppendInt8(b, int8(v.state))
	for _, ts := range []taskSet{v.assigned.active, v.assigned.standby, v.assigned.warmup,
		v.pending.active, v.pending.standby, v.pending.warmup} {
		b = appendTaskSet(b, ts)
	}
	return kbin.AppendUvarint(b, 0)
}

func decodeStreamsCurrent(value []byte) (*streamsCurrentValue, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	v := &streamsCurrentValue{epoch: r.Int32(), previousEpoch: r.Int32(), state: memberState(r.Int8())}
	v.assigned = streamsTasks{active: readTaskSet(&r), standby: readTaskSet(&r), warmup: readTaskSet(&r)}
	v.pending = streamsTasks{active: readTaskSet(&r), standby: readTaskSet(&r), warmup: readTaskSet(&r)}
	readTags(&r, nil)
	return v, complete(&r)
}

// appendTaskSet encodes Kafka's []TaskIds: per subtopology, its ID and
// partitions.
func appendTaskSet(b []byte, ts taskSet) []byte {
	b = kbin.AppendCompactArrayLen(b, len(ts))
	for _, id := range sortedKeys(ts) {
		b = kbin.AppendCompactString(b, id)
		b = kbin.AppendCompactArrayLen(b, len(ts[id]))
		for _, p := range ts[id] {
			b = kbin.AppendInt32(b, p)
		}
		b = kbin.AppendUvarint(b, 0)
	}
	return b
}

func readTaskSet(r *kbin.Reader) taskSet {
	n := r.CompactArrayLen()
	var tasks []taskID
	for i := int32(0); i < n && r.Ok(); i++ {
		id := r.CompactString()
		np := r.CompactArrayLen()
		for j := int32(0); j < np && r.Ok(); j++ {
			tasks = append(tasks, taskID{id, r.Int32()})
		}
		readTags(r, nil)
	}
	return taskSetOf(tasks)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// The records of a streams group's changes.

func streamsEpochRecord(g *streamsGroup) kv {
	v := streamsMetadataValue{epoch: g.epoch, metadataHash: g.metadataHash,
		validatedTopologyEpoch: g.validatedTopologyEpoch, assignmentConfigs: g.assignmentConfigs}
	return kv{key: consumerKey(streamsGroupMetadataKeyType, g.groupID), value: v.encode()}
}

func streamsTopologyRecord(groupID string, t *streamsTopology) kv {
	return kv{key: consumerKey(streamsGroupTopologyKeyType, groupID), value: encodeStreamsTopology(t)}
}

func streamsMemberRecord(groupID string, m *streamsMember) kv {
	return kv{key: consumerKey(streamsGroupMemberMetadataKeyType, groupID, m.id), value: encodeStreamsMember(m)}
}

func streamsTargetRecord(groupID, memberID string, t streamsTasks) kv {
	return kv{key: consumerKey(streamsGroupTargetMemberKeyType, groupID, memberID), value: encodeStreamsTarget(t)}
}

func streamsTargetEpochRecord(groupID string, epoch int32) kv {
	return kv{key: consumerKey(streamsGroupTargetMetadataKeyType, groupID), value: targetEpochValue(epoch)}
}

func streamsCurrentRecord(groupID string, m *streamsMember) kv {
	v := streamsCurrentValue{epoch: m.epoch, previousEpoch: m.previousEpoch, state: m.state,
		assigned: m.assigned, pending: m.pendingRevocation}
	return kv{key: consumerKey(streamsGroupCurrentMemberKeyType, groupID, m.id), value: v.encode()}
}

func streamsMemberTombstones(groupID, memberID string) []kv {
	return []kv{
		{key: consumerKey(streamsGroupCurrentMemberKeyType, groupID, memberID)},
		{key: consumerKey(streamsGroupTargetMemberKeyType, groupID, memberID)},
		{key: consumerKey(streamsGroupMemberMetadataKeyType, groupID, memberID)},
	}
}
