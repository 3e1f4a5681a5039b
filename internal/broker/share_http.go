package broker

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
)

// SharePartitionStatus is one share-partition this broker leads, as GET
// /v1/share-partitions shows it (`samsa group describe --http` reads it):
// its window of offsets and how many of them are in each state. Kafka has
// no request that shows in-flight records; the leader is the only one
// that knows them.
type SharePartitionStatus struct {
	Group        string `json:"group"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	LeaderEpoch  int32  `json:"leader_epoch"`
	StartOffset  int64  `json:"start_offset"`
	EndOffset    int64  `json:"end_offset"`
	Available    int64  `json:"available"`
	Acquired     int64  `json:"acquired"`
	Acknowledged int64  `json:"acknowledged"`
	Archived     int64  `json:"archived"`
}

// SharePartitions lists the loaded share-partitions led here (of one
// group, or all with group ""), by group, topic and partition.
func (b *Broker) SharePartitions(group string) []SharePartitionStatus {
	b.shareParts.mu.Lock()
	parts := make([]*sharePart, 0, len(b.shareParts.parts))
	for k, sp := range b.shareParts.parts {
		if group == "" || k.group == group {
			parts = append(parts, sp)
		}
	}
	b.shareParts.mu.Unlock()
	out := make([]SharePartitionStatus, 0, len(parts))
	for _, sp := range parts {
		ts, ok := b.topics.byTopicID(sp.key.topic)
		if !ok {
			continue
		}
		sp.mu.Lock()
		if sp.p != nil {
			st := sp.p.Stats()
			out = append(out, SharePartitionStatus{Group: sp.key.group, Topic: ts.name, Partition: sp.key.partition,
				LeaderEpoch: sp.leaderEpoch, StartOffset: sp.p.StartOffset(), EndOffset: sp.p.EndOffset(),
				Available: st.Available, Acquired: st.Acquired, Acknowledged: st.Acknowledged, Archived: st.Archived})
		}
		sp.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b SharePartitionStatus) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// serveSharePartitions answers GET /v1/share-partitions[?group=G].
func (b *Broker) serveSharePartitions(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b.SharePartitions(r.URL.Query().Get("group"))); err != nil {
		b.log.Debug("writing the share-partitions", "err", err)
	}
}
