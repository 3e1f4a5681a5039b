package restproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTTL is how long a produce trusts the topic metadata it read:
// long enough that a stream of produces pays one Metadata request, short
// enough that a deleted topic or added partitions show within seconds.
// Leaders are franz-go's business (it follows NOT_LEADER itself); the cache
// only answers the cluster ID, whether the topic exists and its partitions.
const metadataTTL = 5 * time.Second

// metadataCache keeps, per topic, the Metadata answer a produce checks
// its path against, so a produce does not cost a Metadata round trip.
type metadataCache struct {
	mu     sync.Mutex
	topics map[string]cachedTopic
}

type cachedTopic struct {
	cluster    string
	partitions map[int32]struct{}
	read       time.Time
}

func (c *metadataCache) get(topic string) (cachedTopic, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.topics[topic]
	if !ok || time.Since(e.read) > metadataTTL {
		return cachedTopic{}, false
	}
	return e, true
}

func (c *metadataCache) put(topic string, e cachedTopic) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.topics == nil {
		c.topics = map[string]cachedTopic{}
	}
	c.topics[topic] = e
}

func (c *metadataCache) forget(topic string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.topics, topic)
}

// produceTopic answers the cluster ID and the topic's partitions for a
// produce: from the cache when fresh and it knows the partition asked for
// (nil: any), otherwise read from the cluster and cached, so a partition
// added since the cache was filled is found at once. A path naming
// another cluster is 404, a missing topic 404 40403, as clusterMetadata
// and topicMetadata answer.
func (p *Proxy) produceTopic(ctx context.Context, req *http.Request, topic string, partition *int32) (cachedTopic, error) {
	e, err := p.topicForProduce(ctx, topic, partition)
	if err != nil {
		return e, err
	}
	if id := req.PathValue("cluster_id"); id != e.cluster {
		return e, errClusterNotFound(id)
	}
	return e, nil
}

// topicForProduce is produceTopic without a cluster in the path (v2's).
func (p *Proxy) topicForProduce(ctx context.Context, topic string, partition *int32) (cachedTopic, error) {
	kc := p.kafka(ctx)
	e, ok := kc.metadata.get(topic)
	missing := false
	if ok && partition != nil {
		_, ok = e.partitions[*partition]
		missing = !ok
	}
	if !ok {
		var err error
		if e, err = p.readTopic(ctx, topic); err != nil {
			return e, err
		}
		kc.metadata.put(topic, e)
		if missing {
			// The partition may be new: franz-go's producer learns of it at
			// its next metadata refresh (it refuses the record until then),
			// so ask for that refresh now.
			kc.client.ForceMetadataRefresh()
			awaitProducerPartition(ctx, kc.client, topic, *partition)
		}
	}
	return e, nil
}

// readTopic sends a Metadata request for topic. It is sent as a plain
// request, not through kadm.Metadata: that answers from franz-go's own
// metadata cache while it is younger than MetadataMinAge (5s), which
// would hide a change the proxy's cache is being refreshed to see.
func (p *Proxy) readTopic(ctx context.Context, topic string) (cachedTopic, error) {
	e, err := p.readTopicOnce(ctx, topic)
	for i := 0; i < unknownTopicRereads && errors.Is(err, kerr.UnknownTopicOrPartition); i++ {
		select {
		case <-ctx.Done():
			return e, err
		case <-time.After(unknownTopicBackoff):
		}
		e, err = p.readTopicOnce(ctx, topic)
	}
	return e, err
}

// A broker learns of a topic a moment after CreateTopics answers (in a
// cluster, the one asked may not have applied the record yet): a produce
// right after a create would otherwise be 404 for a topic that exists.
// An unknown topic is asked about this many times more, this far apart,
// before the 404 (which a topic that really is missing then pays, 300 ms).
const (
	unknownTopicRereads = 3
	unknownTopicBackoff = 100 * time.Millisecond
)

func (p *Proxy) readTopicOnce(ctx context.Context, topic string) (cachedTopic, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, p.kafka(ctx).client)
	if err != nil {
		return cachedTopic{}, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return cachedTopic{}, err
		}
		e := cachedTopic{partitions: map[int32]struct{}{}, read: time.Now()}
		if resp.ClusterID != nil {
			e.cluster = *resp.ClusterID
		}
		for _, part := range t.Partitions {
			e.partitions[part.Partition] = struct{}{}
		}
		return e, nil
	}
	return cachedTopic{}, errTopicNotFound()
}

// staleMetadata reports a produce error that means the cached topic is
// wrong (deleted, recreated, partitions moved), so the next produce
// reads it again.
func staleMetadata(err error) bool {
	return errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.NotLeaderForPartition) ||
		errors.Is(err, kerr.UnknownTopicID)
}

// producerPartitionWait bounds awaitProducerPartition: franz-go's refresh
// takes a round trip or two.
const producerPartitionWait = 2 * time.Second

// awaitProducerPartition waits, within ctx, until franz-go's producer
// knows a partition the cluster has just been seen to have: the refresh
// ForceMetadataRefresh asks for runs in the background, and a record for
// the partition before it lands fails with "invalid record partitioning
// choice" (the contract test met this as a 500 right after a PATCH). A
// topic the producer has not loaded yet needs no wait: its first produce
// loads every partition. The wait is bounded by producerPartitionWait: a
// partition without a leader is not waited for past it.
func awaitProducerPartition(ctx context.Context, cl *kgo.Client, topic string, partition int32) {
	ctx, cancel := context.WithTimeout(ctx, producerPartitionWait)
	defer cancel()
	for {
		if known, _, _ := cl.PartitionLeader(topic, 0); known < 0 {
			return // not loaded, or no leader to wait for
		}
		if leader, _, _ := cl.PartitionLeader(topic, partition); leader >= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return // the produce then fails with the context's error
		case <-time.After(10 * time.Millisecond):
		}
	}
}
