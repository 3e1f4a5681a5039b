package group

import (
	"bytes"
	"maps"
	"reflect"
	"testing"
	"time"
)

// streamsFuzzRecords are one of each streams group record, seeds of the
// load fuzzers.
func streamsFuzzRecords() []kv {
	topo := &streamsTopology{epoch: 2, subtopologies: []subtopology{{
		id: "0", sourceTopics: []string{"in"}, sourceRegex: []string{"in-.*"},
		changelogs:         []streamsTopicInfo{{name: "app-s-changelog", configs: [][2]string{{"cleanup.policy", "compact"}}}},
		repartitionSinks:   []string{"app-r-repartition"},
		repartitionSources: []streamsTopicInfo{{name: "app-q-repartition", partitions: 4, replication: 3}},
		copartitionGroups:  []copartitionGroup{{sourceTopics: []int16{0}, repartitionSources: []int16{0}}},
	}}}
	m := &streamsMember{id: "m", instanceID: "i", clientID: "c", clientHost: "/h", rebalanceTimeout: time.Second,
		topologyEpoch: 2, processID: "p", endpoint: &streamsEndpoint{"h", 9}, clientTags: [][2]string{{"k", "v"}},
		epoch: 3, previousEpoch: 2, state: memberUnrevoked,
		assigned:          streamsTasks{active: taskSet{"0": {1}}, standby: taskSet{"0": {2}}},
		pendingRevocation: streamsTasks{active: taskSet{"0": {0}}}}
	g := newStreamsGroup("sg")
	g.epoch, g.metadataHash, g.validatedTopologyEpoch, g.assignmentConfigs = 3, 5, 2, map[string]string{"num.standby.replicas": "1"}
	return []kv{
		streamsEpochRecord(&g),
		streamsTopologyRecord("sg", topo),
		streamsMemberRecord("sg", m),
		streamsTargetRecord("sg", "m", streamsTasks{active: taskSet{"0": {0, 1}}, warmup: taskSet{"0": {3}}}),
		streamsTargetEpochRecord("sg", 3),
		streamsCurrentRecord("sg", m),
	}
}

// The streams group records are Kafka's bytes: the simplest checked by
// hand, all by round trip.
func TestStreamsRecordBytes(t *testing.T) {
	v := streamsMetadataValue{epoch: 5, metadataHash: 7, validatedTopologyEpoch: -1}
	want := []byte{0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 7, 0}
	if got := v.encode(); !bytes.Equal(got, want) {
		t.Errorf("StreamsGroupMetadataValue:\n got %v\nwant %v", got, want)
	}
	// ValidatedTopologyEpoch as tag 0 (4 bytes), LastAssignmentConfigs as
	// tag 1: one entry (compact length 2), key, value, empty tags.
	v = streamsMetadataValue{epoch: 5, metadataHash: 7, validatedTopologyEpoch: 0, assignmentConfigs: map[string]string{"k": "1"}}
	want = []byte{0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 7, 2, 0, 4, 0, 0, 0, 0, 1, 6, 2, 2, 'k', 2, '1', 0}
	if got := v.encode(); !bytes.Equal(got, want) {
		t.Errorf("StreamsGroupMetadataValue with tags:\n got %v\nwant %v", got, want)
	}
	// Key type 22, group, member.
	if got := consumerKey(streamsGroupCurrentMemberKeyType, "g", "m"); !bytes.Equal(got, []byte{0, 22, 0, 1, 'g', 0, 1, 'm'}) {
		t.Errorf("StreamsGroupCurrentMemberAssignmentKey: %v", got)
	}
	// Version 0, active [{"0", [1]}], empty standby and warm-up, tags.
	target := encodeStreamsTarget(streamsTasks{active: taskSet{"0": {1}}})
	if want := []byte{0, 0, 2, 2, '0', 2, 0, 0, 0, 1, 0, 1, 1, 0}; !bytes.Equal(target, want) {
		t.Errorf("StreamsGroupTargetAssignmentMemberValue:\n got %v\nwant %v", target, want)
	}

	recs := streamsFuzzRecords()
	md, err := decodeStreamsMetadataValue(recs[0].value)
	if err != nil || md.epoch != 3 || md.metadataHash != 5 || md.validatedTopologyEpoch != 2 || !maps.Equal(md.assignmentConfigs, map[string]string{"num.standby.replicas": "1"}) {
		t.Errorf("metadata round trip: %+v %v", md, err)
	}
	topo, err := decodeStreamsTopology(recs[1].value)
	if err != nil || !bytes.Equal(encodeStreamsTopology(topo), recs[1].value) || topo.subtopologies[0].repartitionSources[0].replication != 3 {
		t.Errorf("topology round trip: %+v %v", topo, err)
	}
	m, err := decodeStreamsMember("m", recs[2].value)
	if err != nil || !bytes.Equal(encodeStreamsMember(m), recs[2].value) || m.endpoint.port != 9 {
		t.Errorf("member round trip: %+v %v", m, err)
	}
	tt, err := decodeStreamsTarget(recs[3].value)
	if err != nil || !reflect.DeepEqual(tt.warmup, taskSet{"0": {3}}) || !bytes.Equal(encodeStreamsTarget(tt), recs[3].value) {
		t.Errorf("target round trip: %+v %v", tt, err)
	}
	cur, err := decodeStreamsCurrent(recs[5].value)
	if err != nil || cur.epoch != 3 || cur.state != memberUnrevoked || !bytes.Equal(cur.encode(), recs[5].value) {
		t.Errorf("current assignment round trip: %+v %v", cur, err)
	}
}
