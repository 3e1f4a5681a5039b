package restproxy

import (
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Confluent's REST Proxy v2 read endpoints: topics, partitions (with
// their offsets) and brokers, at the root of the API, answered in
// application/vnd.kafka.v2+json (kafka-rest's resources/v2 and
// entities/v2). v2 errors are the same body as v3's,
// {"error_code":N,"message":"..."}.

// v2ContentType is every v2 answer's type, as Confluent's resources
// produce it.
const v2ContentType = "application/vnd.kafka.v2+json"

// routeV2Topics serves v2's read-only metadata: topics, a topic with its
// configs, partitions, a partition's offsets and the broker IDs.
func (p *Proxy) routeV2Topics(mux *http.ServeMux) {
	mux.HandleFunc("GET /topics", p.v2(p.v2ListTopics))
	mux.HandleFunc("GET /topics/{topic}", p.v2(p.v2GetTopic))
	mux.HandleFunc("GET /topics/{topic}/partitions", p.v2(p.v2ListPartitions))
	mux.HandleFunc("GET /topics/{topic}/partitions/{partition}", p.v2(p.v2GetPartition))
	mux.HandleFunc("GET /topics/{topic}/partitions/{partition}/offsets", p.v2(p.v2PartitionOffsets))
	mux.HandleFunc("GET /brokers", p.v2(p.v2ListBrokers))
}

// v2 wraps a v2 handler with Confluent's content negotiation: an Accept
// header that takes none of the types a v2 resource produces is 406.
func (p *Proxy) v2(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if !acceptsV2(req.Header.Values("Accept")) {
			writeV2Error(w, &Error{http.StatusNotAcceptable, http.StatusNotAcceptable, "HTTP 406 Not Acceptable"})
			return
		}
		h(w, req)
	}
}

// acceptsV2 reads Accept headers: no header, or any range that matches
// application/vnd.kafka.v2+json, application/vnd.kafka+json or
// application/json (Confluent's v2 types and the ones it answers them as)
// with a non-zero q, takes a v2 answer.
func acceptsV2(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			switch mt {
			case "*/*", "application/*", v2ContentType, "application/vnd.kafka+json", "application/json":
				return true
			}
		}
	}
	return false
}

func writeV2(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", v2ContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do about it
}

func writeV2Error(w http.ResponseWriter, err error) {
	e := kafkaError(err)
	writeV2(w, e.Status, e)
}

// v2Partition is Confluent's GetPartitionResponse.
type v2Partition struct {
	Partition int32       `json:"partition"`
	Leader    int32       `json:"leader"` // -1 when offline
	Replicas  []v2Replica `json:"replicas"`
}

type v2Replica struct {
	Broker int32 `json:"broker"`
	Leader bool  `json:"leader"`
	InSync bool  `json:"in_sync"`
}

func newV2Partition(pd kadm.PartitionDetail) v2Partition {
	out := v2Partition{Partition: pd.Partition, Leader: pd.Leader, Replicas: []v2Replica{}}
	if pd.Leader < 0 {
		out.Leader = -1
	}
	for _, b := range pd.Replicas {
		out.Replicas = append(out.Replicas, v2Replica{Broker: b, Leader: b == pd.Leader, InSync: slices.Contains(pd.ISR, b)})
	}
	return out
}

func v2Partitions(t kadm.TopicDetail) []v2Partition {
	out := make([]v2Partition, 0, len(t.Partitions))
	for _, pd := range t.Partitions.Sorted() {
		out = append(out, newV2Partition(pd))
	}
	return out
}

// v2ListTopics answers the topics' names, sorted, without the internal
// ones, as Confluent's AdminClient.listTopics() lists them.
func (p *Proxy) v2ListTopics(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.kafka(ctx).admin.Metadata(ctx)
	if err != nil {
		writeV2Error(w, err)
		return
	}
	names := []string{}
	for name, t := range md.Topics {
		if t.Err == nil && !t.IsInternal {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	writeV2(w, http.StatusOK, names)
}

// v2Topic reads the path's topic: unknown is 404 40403, as Confluent's
// describeTopics fails with UNKNOWN_TOPIC_OR_PARTITION.
func (p *Proxy) v2Topic(w http.ResponseWriter, req *http.Request) (kadm.TopicDetail, bool) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	name := req.PathValue("topic")
	md, err := p.kafka(ctx).admin.Metadata(ctx, name)
	if err != nil {
		writeV2Error(w, err)
		return kadm.TopicDetail{}, false
	}
	t, ok := md.Topics[name]
	if !ok {
		writeV2Error(w, errTopicNotFound())
		return t, false
	}
	if t.Err != nil {
		writeV2Error(w, t.Err)
		return t, false
	}
	return t, true
}

// v2GetTopic is Confluent's GetTopicResponse: name, every config's value
// (defaults included, as DescribeConfigs answers them), partitions.
func (p *Proxy) v2GetTopic(w http.ResponseWriter, req *http.Request) {
	t, ok := p.v2Topic(w, req)
	if !ok {
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	configs, err := p.describeTopicConfigs(ctx, t.Topic)
	if err != nil {
		writeV2Error(w, err)
		return
	}
	cm := map[string]*string{}
	for _, c := range configs {
		cm[c.Name] = c.Value
	}
	writeV2(w, http.StatusOK, struct {
		Name       string             `json:"name"`
		Configs    map[string]*string `json:"configs"`
		Partitions []v2Partition      `json:"partitions"`
	}{t.Topic, cm, v2Partitions(t)})
}

func (p *Proxy) v2ListPartitions(w http.ResponseWriter, req *http.Request) {
	t, ok := p.v2Topic(w, req)
	if !ok {
		return
	}
	writeV2(w, http.StatusOK, v2Partitions(t))
}

// v2Partition reads the path's partition: not a number or not in the
// topic is 404 40402 (Jersey answers an int path parameter that does not
// parse with 404 too).
func (p *Proxy) v2Partition(w http.ResponseWriter, req *http.Request) (kadm.PartitionDetail, bool) {
	t, ok := p.v2Topic(w, req)
	if !ok {
		return kadm.PartitionDetail{}, false
	}
	n, err := strconv.ParseInt(req.PathValue("partition"), 10, 32)
	pd, found := t.Partitions[int32(n)]
	if err != nil || !found {
		writeV2Error(w, errPartitionNotFound())
		return pd, false
	}
	return pd, true
}

func (p *Proxy) v2GetPartition(w http.ResponseWriter, req *http.Request) {
	if pd, ok := p.v2Partition(w, req); ok {
		writeV2(w, http.StatusOK, newV2Partition(pd))
	}
}

// v2PartitionOffsets is Confluent's TopicPartitionOffsetResponse: the
// log start offset and the high watermark.
func (p *Proxy) v2PartitionOffsets(w http.ResponseWriter, req *http.Request) {
	pd, ok := p.v2Partition(w, req)
	if !ok {
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	adm := p.kafka(ctx).admin
	start, err := adm.ListStartOffsets(ctx, pd.Topic)
	if err != nil {
		writeV2Error(w, err)
		return
	}
	end, err := adm.ListEndOffsets(ctx, pd.Topic)
	if err != nil {
		writeV2Error(w, err)
		return
	}
	so, sok := start.Lookup(pd.Topic, pd.Partition)
	eo, eok := end.Lookup(pd.Topic, pd.Partition)
	switch {
	case !sok || !eok:
		writeV2Error(w, errPartitionNotFound())
		return
	case so.Err != nil:
		writeV2Error(w, so.Err)
		return
	case eo.Err != nil:
		writeV2Error(w, eo.Err)
		return
	}
	writeV2(w, http.StatusOK, struct {
		Beginning int64 `json:"beginning_offset"`
		End       int64 `json:"end_offset"`
	}{so.Offset, eo.Offset})
}

// v2ListBrokers is Confluent's BrokerList: the broker IDs, sorted.
func (p *Proxy) v2ListBrokers(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	brokers, err := p.kafka(ctx).admin.ListBrokers(ctx)
	if err != nil {
		writeV2Error(w, err)
		return
	}
	ids := []int32{}
	for _, b := range brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	writeV2(w, http.StatusOK, struct {
		Brokers []int32 `json:"brokers"`
	}{ids})
}
