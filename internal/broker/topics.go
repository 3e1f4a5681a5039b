package broker

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicState is a topic as this broker serves it: its resolved config and
// the partitions it hosts. Replaced whole when the metadata image changes
// the topic, so handlers can hold one without locks.
type topicState struct {
	name       string
	id         model.TopicID
	config     config.Values // effective topic config (overrides over broker defaults)
	partitions []*replication.Partition
	internal   bool
	metrics    *topicMetrics // shared by the topic's successive states (metrics.go)
	// throttles are the topic's throttled-replica lists for this broker
	// (replication_throttle.go).
	throttles topicThrottles
}

// topicTable maps names and IDs to topics.
type topicTable struct {
	mu     sync.RWMutex
	byName map[string]*topicState
	byID   map[model.TopicID]*topicState
}

func newTopicTable() *topicTable {
	return &topicTable{byName: map[string]*topicState{}, byID: map[model.TopicID]*topicState{}}
}

func (t *topicTable) put(ts *topicState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.byName[ts.name]; ok {
		delete(t.byID, old.id)
	}
	t.byName[ts.name] = ts
	t.byID[ts.id] = ts
}

func (t *topicTable) remove(name string) *topicState {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts, ok := t.byName[name]
	if !ok {
		return nil
	}
	delete(t.byName, name)
	delete(t.byID, ts.id)
	return ts
}

func (t *topicTable) byTopicName(name string) (*topicState, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ts, ok := t.byName[name]
	return ts, ok
}

// lookup finds a topic of a request by ID (byID: the request's version
// names topics by ID) or by name, with the error a request gets for an
// unknown one.
func (t *topicTable) lookup(byID bool, id model.TopicID, name string) (*topicState, int16) {
	if byID {
		if ts, ok := t.byTopicID(id); ok {
			return ts, 0
		}
		return nil, kerr.UnknownTopicID.Code
	}
	if ts, ok := t.byTopicName(name); ok {
		return ts, 0
	}
	return nil, kerr.UnknownTopicOrPartition.Code
}

func (t *topicTable) byTopicID(id model.TopicID) (*topicState, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ts, ok := t.byID[id]
	return ts, ok
}

func (t *topicTable) all() []*topicState {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]*topicState, 0, len(t.byName))
	for _, ts := range t.byName {
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b *topicState) int { return strings.Compare(a.name, b.name) })
	return out
}

// partition returns one partition, or the error code a request for it gets.
func (ts *topicState) partition(p int32) (*replication.Partition, int16) {
	if p < 0 || int(p) >= len(ts.partitions) {
		return nil, kerr.UnknownTopicOrPartition.Code
	}
	if ts.partitions[p] == nil {
		return nil, kerr.NotLeaderForPartition.Code
	}
	return ts.partitions[p], 0
}

// storageConfig maps a topic's Kafka config to the log's.
func storageConfig(v config.Values) storage.Config {
	c := storage.Config{
		SegmentBytes:       int64(v.Int("segment.bytes")),
		SegmentMs:          v.Long("segment.ms"),
		SegmentJitterMs:    v.Long("segment.jitter.ms"),
		SegmentIndexBytes:  int64(v.Int("segment.index.bytes")),
		IndexIntervalBytes: int64(v.Int("index.interval.bytes")),
		RetentionMs:        v.Long("retention.ms"),
		RetentionBytes:     v.Long("retention.bytes"),
		FlushMessages:      v.Long("flush.messages"),
		FlushMs:            v.Long("flush.ms"),
		LogAppendTime:      v.String("message.timestamp.type") == "LogAppendTime",
		Compacted:          slices.Contains(v.List("cleanup.policy"), "compact"),
		Deletes:            slices.Contains(v.List("cleanup.policy"), "delete"),
		OffsetGaps:         v.String(config.MirrorSourceConfig) != "",

		MinCleanableDirtyRatio: v.Double("min.cleanable.dirty.ratio"),
		MinCompactionLagMs:     v.Long("min.compaction.lag.ms"),
		MaxCompactionLagMs:     v.Long("max.compaction.lag.ms"),
		DeleteRetentionMs:      v.Long("delete.retention.ms"),
	}
	if c.FlushMessages <= 0 {
		c.FlushMessages = math.MaxInt64
	}
	if c.FlushMs <= 0 {
		c.FlushMs = math.MaxInt64
	}
	return c
}
