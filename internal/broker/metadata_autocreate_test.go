package broker

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestMetadataRightAfterDeleteTopics: once DeleteTopics has answered, a
// Metadata request for the topic shows it gone, also at an old version that
// implies auto-creation: as in Kafka, the auto-creation answers
// LEADER_NOT_AVAILABLE with no partitions while it runs, and the topic that
// a retry finds is a new one (new ID, empty log).
func TestMetadataRightAfterDeleteTopics(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	created := createTopic(t, b, "short-lived", 3)
	rc := dialRaw(t, b)
	produceN(t, rc, "short-lived", 0, 5)
	adm := kadm.NewClient(newFranz(t, b.Addr()))

	metadataAt := func(version int16, allowCreate bool, corr int32) kmsg.MetadataResponseTopic {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = version, allowCreate
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("short-lived")
		req.Topics = append(req.Topics, rt)
		resp := rc.roundTrip(req, corr).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 {
			t.Fatalf("metadata v%d: %d topics", version, len(resp.Topics))
		}
		return resp.Topics[0]
	}

	for round, version := range []int16{12, 1} {
		if _, err := adm.DeleteTopics(ctx, "short-lived"); err != nil {
			t.Fatal(err)
		}
		if mt := metadataAt(12, false, 10+int32(round)); mt.ErrorCode != kerr.UnknownTopicOrPartition.Code || len(mt.Partitions) != 0 {
			t.Fatalf("round %d: v12 without auto-creation right after the delete: error %d, %d partitions", round, mt.ErrorCode, len(mt.Partitions))
		}
		mt := metadataAt(version, true, 20+int32(round))
		if mt.ErrorCode != kerr.LeaderNotAvailable.Code || len(mt.Partitions) != 0 {
			t.Fatalf("round %d: v%d with auto-creation right after the delete: error %d, %d partitions; want LEADER_NOT_AVAILABLE and none",
				round, version, mt.ErrorCode, len(mt.Partitions))
		}
		// The retry finds the recreated topic: a new ID, default partitions, empty.
		var again kmsg.MetadataResponseTopic
		for corr := int32(100); ; corr++ {
			applied := b.imageApplied.Wait()
			again = metadataAt(12, false, corr)
			if again.ErrorCode == 0 {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("the auto-created topic never appeared: error %d", again.ErrorCode)
			}
			select {
			case <-applied:
			case <-ctx.Done():
			}
		}
		if again.TopicID == created.ID {
			t.Fatalf("round %d: the topic kept its old ID", round)
		}
		ts, _ := b.topics.byTopicName("short-lived")
		p, _ := ts.partition(0)
		if hw := p.HighWatermark(); hw != 0 {
			t.Fatalf("round %d: recreated partition 0 has high watermark %d, want 0", round, hw)
		}
	}
}
