package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// part is one partition of a test image: replicas (the first preferred),
// ISR and leader (metadata.NoLeader for none).
type part struct {
	replicas, isr []model.NodeID
	leader        model.NodeID
}

func ids(v ...model.NodeID) []model.NodeID { return v }

// partitionsImage is an image of brokers 1..brokers (those in fenced
// fenced) and one topic "t" with parts.
func partitionsImage(t *testing.T, brokers int, fenced []model.NodeID, parts ...part) *metadata.Image {
	t.Helper()
	var recs []metadata.Record
	for id := model.NodeID(1); id <= model.NodeID(brokers); id++ {
		recs = append(recs, metadata.BrokerRegistration{NodeID: id, Incarnation: "x", Fenced: slices.Contains(fenced, id)})
	}
	topicID := model.TopicID{1}
	recs = append(recs, metadata.TopicRecord{Name: "t", TopicID: topicID})
	for i, p := range parts {
		recs = append(recs, metadata.PartitionRecord{TopicID: topicID, Partition: int32(i), Replicas: p.replicas, ISR: p.isr, Leader: p.leader})
	}
	img, err := metadata.Empty().Apply(recs...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// unfencedIn is the usable test of a plain image: registered and unfenced.
func unfencedIn(img *metadata.Image) func(model.NodeID) bool {
	return func(id model.NodeID) bool { b, ok := img.Broker(id); return ok && !b.Fenced }
}

func TestPlanElection(t *testing.T) {
	const none = metadata.NoLeader
	cases := []struct {
		name    string
		typ     ElectionType
		fenced  []model.NodeID
		p       part
		err     *kerr.Error
		leader  model.NodeID   // the new leader when err is nil
		isr     []model.NodeID // the new ISR when the election changes it
		unclean bool
	}{
		{"preferred already leads", ElectPreferred, nil, part{ids(1, 2, 3), ids(1, 2, 3), 1}, kerr.ElectionNotNeeded, 0, nil, false},
		{"preferred back in ISR", ElectPreferred, nil, part{ids(1, 2, 3), ids(2, 3, 1), 2}, nil, 1, nil, false},
		{"preferred out of ISR", ElectPreferred, nil, part{ids(1, 2, 3), ids(2, 3), 2}, kerr.PreferredLeaderNotAvailable, 0, nil, false},
		{"preferred fenced", ElectPreferred, ids(1), part{ids(1, 2, 3), ids(1, 2, 3), 2}, kerr.PreferredLeaderNotAvailable, 0, nil, false},
		{"preferred down, leaderless, ISR member up", ElectPreferred, ids(1, 2), part{ids(1, 2, 3), ids(2, 3), none}, nil, 3, nil, false},
		{"preferred down, nobody in sync", ElectPreferred, ids(1, 2), part{ids(1, 2, 3), ids(2), none}, kerr.PreferredLeaderNotAvailable, 0, nil, false},
		{"unclean with a live leader", ElectUnclean, nil, part{ids(1, 2, 3), ids(2), 2}, kerr.ElectionNotNeeded, 0, nil, false},
		{"unclean picks the ISR first", ElectUnclean, ids(1), part{ids(1, 2, 3), ids(1, 3), none}, nil, 3, nil, false},
		{"unclean out of sync", ElectUnclean, ids(1), part{ids(1, 2, 3), ids(1), none}, nil, 2, ids(2), true},
		{"unclean, every replica down", ElectUnclean, ids(1, 2, 3), part{ids(1, 2, 3), ids(1), none}, kerr.EligibleLeadersNotAvailable, 0, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := partitionsImage(t, 3, c.fenced, c.p)
			r, ch := planElection(img, model.TopicPartition{Topic: "t"}, c.typ, unfencedIn(img))
			if r.Err != c.err {
				t.Fatalf("error %v (%s), want %v", r.Err, r.Message, c.err)
			}
			if c.err != nil {
				if ch != nil {
					t.Fatalf("a change despite %v: %+v", c.err, ch.record)
				}
				return
			}
			if ch == nil || *ch.record.Leader != c.leader || !slices.Equal(ch.record.ISR, c.isr) || ch.unclean != c.unclean {
				t.Fatalf("change %+v, want leader %d ISR %v unclean %v", ch, c.leader, c.isr, c.unclean)
			}
			// The change applies, and moves the leader epoch.
			next, err := img.Apply(ch.record)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := next.Partition(model.TopicPartition{Topic: "t"})
			if p.Leader != c.leader || p.LeaderEpoch <= c0(img).LeaderEpoch {
				t.Errorf("after the change: leader %d epoch %d", p.Leader, p.LeaderEpoch)
			}
		})
	}
}

func c0(img *metadata.Image) metadata.PartitionImage {
	p, _ := img.Partition(model.TopicPartition{Topic: "t"})
	return p
}

func TestPlanElectionsRequestShapes(t *testing.T) {
	img := partitionsImage(t, 3, nil,
		part{ids(1, 2, 3), ids(1, 2, 3), 1}, // preferred leads
		part{ids(2, 3, 1), ids(3, 1, 2), 3}, // preferred in sync, not leading
		part{ids(3, 1, 2), ids(1, 2), 1},    // preferred out of sync
	)
	show := func(rs []ElectTopicResult) string {
		out := ""
		for _, tr := range rs {
			out += tr.Topic + ":"
			for _, p := range tr.Partitions {
				name := "ok"
				if p.Err != nil {
					name = p.Err.Message
				}
				out += fmt.Sprintf(" %d=%s", p.Partition, name)
			}
			out += ";"
		}
		return out
	}
	cases := []struct {
		name    string
		topics  []ElectTopic
		want    string
		changes int
	}{
		// All partitions: the ones needing no election are left out.
		{"all", nil, "t: 1=ok 2=PREFERRED_LEADER_NOT_AVAILABLE;", 1},
		{"named", []ElectTopic{{Topic: "t", Partitions: []int32{0, 1}}},
			"t: 0=ELECTION_NOT_NEEDED 1=ok;", 1},
		{"named twice", []ElectTopic{{Topic: "t", Partitions: []int32{1, 1}}}, "t: 1=ok 1=ok;", 1},
		{"unknown", []ElectTopic{{Topic: "t", Partitions: []int32{7}}, {Topic: "nope", Partitions: []int32{0}}},
			"t: 7=UNKNOWN_TOPIC_OR_PARTITION;nope: 0=UNKNOWN_TOPIC_OR_PARTITION;", 0},
		{"none", []ElectTopic{}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, changes := planElections(img, ElectPreferred, c.topics, unfencedIn(img))
			if got := show(rs); got != c.want || len(changes) != c.changes {
				t.Errorf("got %q with %d changes\nwant %q with %d", got, len(changes), c.want, c.changes)
			}
		})
	}
}

// TestElectLeadersCommits: the controller commits a preferred election and
// its image shows the new leader when ElectLeaders returns.
func TestElectLeadersCommits(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	registerBrokers(t, c, 2, 3)
	if res := createOne(t, c, CreateTopic{Name: "t", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: map[int32][]int32{0: {1, 2, 3}}}); res.ErrorCode != 0 {
		t.Fatal(res.ErrorMessage)
	}
	top, _ := c.Image().Topic("t")
	two := model.NodeID(2)
	c.writeMu.Lock()
	err := c.proposeLocked(ctx(t), []metadata.Record{metadata.PartitionChange{TopicID: top.ID, Partition: 0, Leader: &two}})
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, code, msg := c.ElectLeaders(ctx(t), 5, nil); code != kerr.InvalidRequest {
		t.Fatalf("election type 5: %v %s", code, msg)
	}
	rs, code, msg := c.ElectLeaders(ctx(t), ElectPreferred, []ElectTopic{{Topic: "t", Partitions: []int32{0}}})
	if code != nil || len(rs) != 1 || len(rs[0].Partitions) != 1 || rs[0].Partitions[0].Err != nil {
		t.Fatalf("elect: %v %s %+v", code, msg, rs)
	}
	if p := c0(c.Image()); p.Leader != 1 || p.LeaderEpoch != 2 {
		t.Fatalf("after the election: leader %d epoch %d", p.Leader, p.LeaderEpoch)
	}
}
