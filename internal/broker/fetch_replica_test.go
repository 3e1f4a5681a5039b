package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// addFollower lists node 2 as a replica of partition 0 of topic, in the
// ISR, and applies the image in process, so that the single node b answers
// fetches from replica 2 as a cluster's leader does. One node cannot add a
// replica through any API: node 2 is not registered.
func addFollower(tb testing.TB, b *Broker, topic string) model.TopicID {
	tb.Helper()
	ts, ok := b.topics.byTopicName(topic)
	if !ok {
		tb.Fatalf("no topic %s", topic)
	}
	img := b.ctrl.Image()
	both := []model.NodeID{model.NodeID(b.cfg.NodeID), 2}
	next, err := img.ApplyAt(img.Offset()+1000,
		metadata.PartitionChange{TopicID: ts.id, Partition: 0, Replicas: both, ISR: both})
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.applyImage(next); err != nil {
		tb.Fatal(err)
	}
	return ts.id
}

// uncompressed has fillTopic's records stored as produced, 1 KiB each.
var uncompressed = kgo.ProducerBatchCompression(kgo.NoCompression())

// replicaFetchReq is the fetch node 2's fetcher sends for partition 0 of a
// topic (fetchOnce): no session, no wait, topics by ID.
func replicaFetchReq(id model.TopicID, offset int64, maxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 16
	req.ReplicaID, req.ReplicaState.ID = 2, 2
	req.MaxBytes, req.SessionEpoch = maxBytes, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.LogStartOffset, rp.PartitionMaxBytes = offset, -1, maxBytes
	rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	return req
}
