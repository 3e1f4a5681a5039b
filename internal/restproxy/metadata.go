package restproxy

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
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
	cluster string
	detail  kadm.TopicDetail
	read    time.Time
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

// produceTopic answers the cluster ID and the topic's metadata for a
// produce: from the cache when fresh, otherwise read (and cached when the
// topic exists). A path naming another cluster is 404, a missing topic
// 404 40403, as clusterMetadata and topicMetadata answer.
func (p *Proxy) produceTopic(ctx context.Context, req *http.Request, topic string) (string, kadm.TopicDetail, error) {
	e, ok := p.metadata.get(topic)
	if !ok {
		md, err := p.admin.Metadata(ctx, topic)
		if err != nil {
			return "", kadm.TopicDetail{}, err
		}
		t, found := md.Topics[topic]
		if !found {
			return "", t, errTopicNotFound()
		}
		if t.Err != nil {
			return "", t, t.Err
		}
		e = cachedTopic{cluster: md.Cluster, detail: t, read: time.Now()}
		p.metadata.put(topic, e)
	}
	if id := req.PathValue("cluster_id"); id != e.cluster {
		return "", kadm.TopicDetail{}, errClusterNotFound(id)
	}
	return e.cluster, e.detail, nil
}

// staleMetadata reports a produce error that means the cached topic is
// wrong (deleted, recreated, partitions moved), so the next produce
// reads it again.
func staleMetadata(err error) bool {
	return errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.NotLeaderForPartition) ||
		errors.Is(err, kerr.UnknownTopicID)
}
