package broker

// DescribeTopicPartitions (key 75), version 0 (KIP-966).
//
// Like Metadata's topic section, for the named topics (all when the list is
// empty), sorted by name and paginated: at most ResponsePartitionLimit
// partitions per response (capped by max.request.partition.size.limit,
// 2000 by default), resuming at Cursor, with
// NextCursor naming where the next page starts. A missing topic gets
// UNKNOWN_TOPIC_OR_PARTITION. Eligible leader replicas are empty: there is
// no ELR without multiple replicas.
//
// Authorization (authz.go), as Kafka's handler: a listing of all topics
// leaves out those the principal may not DESCRIBE; a named one without
// DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether or not it exists. Each
// topic carries what the principal may do on it (KIP-430).

import (
	"sort"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeTopicPartitions, min: 0, max: 0, handle: typed(handleDescribeTopicPartitions)})
}

func handleDescribeTopicPartitions(b *Broker, c *conn, req *kmsg.DescribeTopicPartitionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	var names []string
	if len(req.Topics) == 0 {
		for _, t := range img.Topics() {
			if b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Name) {
				names = append(names, t.Name)
			}
		}
	} else {
		for _, t := range req.Topics {
			names = append(names, t.Topic)
		}
		sort.Strings(names)
	}
	limit, most := int(req.ResponsePartitionLimit), int(b.cfg.Values.Int("max.request.partition.size.limit"))
	if limit <= 0 || limit > most {
		limit = most
	}
	startPart := int32(0)
	if req.Cursor != nil {
		i := sort.SearchStrings(names, req.Cursor.Topic)
		names, startPart = names[i:], req.Cursor.Partition
	}
	budget := limit
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	for i, name := range names {
		if !describe(name) {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		t, ok := img.Topic(name)
		if !ok {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		from := int32(0)
		if i == 0 {
			from = startPart
		}
		rt, next := describePartitions(img, t, from, budget)
		rt.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeTopic, name)
		resp.Topics = append(resp.Topics, rt)
		budget -= len(rt.Partitions)
		if next >= 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			break
		}
		if budget == 0 && i+1 < len(names) {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: names[i+1], Partition: 0}
			break
		}
	}
	return resp, nil
}

// describePartitions lists up to budget partitions from from; next is the
// first partition left out, or -1.
func describePartitions(img *metadata.Image, t *metadata.TopicImage, from int32, budget int) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic, rt.TopicID, rt.IsInternal = kmsg.StringPtr(t.Name), t.ID, metadata.IsInternalTopic(t.Name)
	for _, p := range t.Partitions {
		if p.Partition < from {
			continue
		}
		if len(rt.Partitions) == budget {
			return rt, p.Partition
		}
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Partition, int32(p.Leader), p.LeaderEpoch
		rp.Replicas, rp.ISR = nodes(p.Replicas), nodes(p.ISR)
		rp.EligibleLeaderReplicas, rp.LastKnownELR, rp.OfflineReplicas = []int32{}, []int32{}, offlineReplicas(img, p)
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt, -1
}
