package broker

// Replication throttles (issue 15; docs/DESIGN-cluster.md, "Replication
// throttles"), as Kafka's: a broker-wide byte rate per side,
// leader.replication.throttled.rate for what this broker sends as leader
// and follower.replication.throttled.rate for what it fetches as follower
// (dynamic broker configs, per broker or cluster default), applied to the
// replicas the topics' leader.replication.throttled.replicas and
// follower.replication.throttled.replicas name for this broker. A
// reassignment (kafka-reassign-partitions.sh --throttle) lists the moving
// partitions' current replicas as leaders and their new ones as
// followers, so only the copy to the new replicas is slowed.
//
// The leader (fetch_replica.go) answers a listed partition empty, and
// caps what it returns of one by what the rate has left, for a follower
// not in the ISR; the follower (replicas.go) leaves a listed partition
// out of its fetch, and caps the bytes it asks, while it is out of sync.
// A replica in the ISR is never held back, so a throttle cannot shrink
// the ISR or slow acks=all producers. Each side counts every byte of its
// listed partitions, in-sync replicas' too, as Kafka does.

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/quota"
	"github.com/samsa-io/samsa/internal/replication"
)

// replicationThrottle is the broker's two sides.
type replicationThrottle struct {
	leader, follower throttleSide
}

// throttleSide is one side's rate and what it did, for the metrics.
type throttleSide struct {
	name string // the metrics' side label
	q    *quota.Replication
	// bytes counts the record bytes of listed partitions replicated;
	// held the partitions held back: answered empty by a leader, left
	// out of a fetch by a follower.
	bytes, held atomic.Uint64
}

func newReplicationThrottle(v config.Values) *replicationThrottle {
	cfg := quota.Config{Samples: int(v.Int("replication.quota.window.num")),
		Window: time.Duration(v.Int("replication.quota.window.size.seconds")) * time.Second}
	return &replicationThrottle{
		leader:   throttleSide{name: "leader", q: quota.NewReplication(cfg)},
		follower: throttleSide{name: "follower", q: quota.NewReplication(cfg)},
	}
}

// applyReplicationThrottles sets both rates from the broker's resolved
// config of a new image: this broker's dynamic value, else the cluster
// default's, else server.properties' (where Kafka reads the two only
// dynamically and ignores a static value), else none.
func (b *Broker) applyReplicationThrottles(bc config.Values) {
	for _, s := range []struct {
		side *throttleSide
		name string
	}{{&b.replThrottle.leader, "leader.replication.throttled.rate"}, {&b.replThrottle.follower, "follower.replication.throttled.rate"}} {
		limit := bc.Long(s.name)
		if s.side.q.Limit() == limit {
			continue
		}
		s.side.q.SetLimit(limit)
		if limit == quota.Unlimited {
			b.log.Info("replication throttle removed", "config", s.name)
		} else {
			b.log.Info("replication throttle set", "config", s.name, "bytes_per_second", limit)
		}
	}
}

// topicThrottles are a topic's throttled-replica lists as they apply to
// this broker.
type topicThrottles struct {
	leader, follower quota.ThrottledReplicas
}

// throttlesOf reads a topic's lists from its resolved config. The catalog
// validates them on every way in, so a list that does not parse can only
// come from a metadata log written by another build: it is logged and
// throttles nothing.
func (b *Broker) throttlesOf(topic string, cfg config.Values, old *topicState) topicThrottles {
	var out topicThrottles
	for _, l := range []struct {
		to   *quota.ThrottledReplicas
		name string
	}{{&out.leader, "leader.replication.throttled.replicas"}, {&out.follower, "follower.replication.throttled.replicas"}} {
		t, err := quota.ParseThrottledReplicas(cfg.List(l.name), b.cfg.NodeID)
		if err != nil {
			b.log.Error("throttled replica list ignored", "topic", topic, "config", l.name, "err", err)
		}
		*l.to = t
	}
	if old != nil && old.throttles.String() != out.String() || old == nil && (!out.leader.IsZero() || !out.follower.IsZero()) {
		b.log.Info("replication throttle of a topic on this broker", "topic", topic, "leader", out.leader.String(), "follower", out.follower.String())
	}
	return out
}

func (t topicThrottles) String() string {
	return fmt.Sprintf("leader %v follower %v", t.leader, t.follower)
}

// followerListed reports whether this broker's replica of p is in its
// topic's follower.replication.throttled.replicas.
func (b *Broker) followerListed(p *replication.Partition) bool {
	ts, ok := b.topics.byTopicID(p.TopicID)
	return ok && ts.throttles.follower.Has(p.TP.Partition)
}

// record counts n bytes of listed partitions replicated by
// side s, and held partitions held back.
func (s *throttleSide) record(n int64, held int, now time.Time) {
	if n > 0 {
		s.q.Record(n, now)
		s.bytes.Add(uint64(n))
	}
	if held > 0 {
		s.held.Add(uint64(held))
	}
}

var (
	descReplicationThrottleRate = prometheus.NewDesc("samsa_replication_throttle_byte_rate",
		"Bytes per second of the partitions a replication throttle lists, as the throttle measures them, per side (leader, follower).", []string{"side"}, nil)
	descReplicationThrottleLimit = prometheus.NewDesc("samsa_replication_throttle_limit_bytes_per_second",
		"The replication throttle in bytes per second, per side; absent while none is set.", []string{"side"}, nil)
	descReplicationThrottledBytes = prometheus.NewDesc("samsa_replication_throttled_bytes_total",
		"Record bytes of the partitions a replication throttle lists, replicated, per side.", []string{"side"}, nil)
	descReplicationThrottled = prometheus.NewDesc("samsa_replication_throttled_partitions_total",
		"Partitions held back by a replication throttle, per side: answered empty by this leader, or left out of this follower's fetch.", []string{"side"}, nil)
)

func (c *brokerCollector) collectReplicationThrottles(ch chan<- prometheus.Metric) {
	now := c.b.cfg.Clock.Now()
	for _, s := range []*throttleSide{&c.b.replThrottle.leader, &c.b.replThrottle.follower} {
		emitGauge(ch, descReplicationThrottleRate, s.q.Rate(now), s.name)
		if limit := s.q.Limit(); limit != quota.Unlimited {
			emitGauge(ch, descReplicationThrottleLimit, float64(limit), s.name)
		}
		emitCounter(ch, descReplicationThrottledBytes, float64(s.bytes.Load()), s.name)
		emitCounter(ch, descReplicationThrottled, float64(s.held.Load()), s.name)
	}
}
