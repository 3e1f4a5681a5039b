package restproxy

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Replica searches and reassignments: the replicas a broker hosts (from
// Metadata), the partition reassignments in progress
// (ListPartitionReassignments, for the cluster, a topic or a partition),
// and a partition's earliest and latest offsets (ListOffsets). The spec
// has no endpoint that starts or cancels a reassignment
// (AlterPartitionReassignments): Confluent's v3 only lists them.
func (p *Proxy) routeReassignments(mux *http.ServeMux) {
	const partitions = "/v3/clusters/{cluster_id}/topics/{topic_name}/partitions"
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/topics/-/partitions/-/reassignment", p.listAllReassignments)
	mux.HandleFunc("GET "+partitions+"/-/reassignment", p.listTopicReassignments)
	mux.HandleFunc("GET "+partitions+"/{partition_id}/reassignment", p.getReassignment)
	mux.HandleFunc("GET "+partitions+"/{partition_id}/offset", p.getPartitionOffsets)
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/brokers/{broker_id}/partition-replicas", p.listBrokerReplicas)
}

type reassignmentData struct {
	Kind             string           `json:"kind"`
	Metadata         resourceMetadata `json:"metadata"`
	ClusterID        string           `json:"cluster_id"`
	TopicName        string           `json:"topic_name"`
	PartitionID      int32            `json:"partition_id"`
	AddingReplicas   []int32          `json:"adding_replicas"`
	RemovingReplicas []int32          `json:"removing_replicas"`
	Replicas         relationship     `json:"replicas"`
}

func newReassignmentData(clusterSelf, cluster string, r kadm.ListPartitionReassignmentsResponse) reassignmentData {
	pid := strconv.Itoa(int(r.Partition))
	partition := clusterSelf + "/topics/" + r.Topic + "/partitions/" + pid
	d := reassignmentData{
		Kind: "KafkaReassignment",
		// Confluent's CRN ends in a bare "reassignment" segment.
		Metadata:         resourceMetadata{Self: partition + "/reassignment", ResourceName: crn("kafka", cluster, "topic", r.Topic, "partition", pid) + "/reassignment"},
		ClusterID:        cluster,
		TopicName:        r.Topic,
		PartitionID:      r.Partition,
		AddingReplicas:   r.AddingReplicas,
		RemovingReplicas: r.RemovingReplicas,
		Replicas:         related(partition + "/replicas"),
	}
	if d.AddingReplicas == nil {
		d.AddingReplicas = []int32{}
	}
	if d.RemovingReplicas == nil {
		d.RemovingReplicas = []int32{}
	}
	return d
}

// listReassignments asks for the reassignments in progress: of every
// partition when topics is nil (Kafka's null topics), else of those
// named.
func (p *Proxy) listReassignments(ctx context.Context, topics []kmsg.ListPartitionReassignmentsRequestTopic) ([]kadm.ListPartitionReassignmentsResponse, error) {
	r := kmsg.NewPtrListPartitionReassignmentsRequest()
	r.TimeoutMillis = int32(p.cfg.Timeout.Milliseconds())
	r.Topics = topics
	resp, err := r.RequestWith(ctx, p.kafka(ctx).client)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, withDetail(err, deref(resp.ErrorMessage))
	}
	var out []kadm.ListPartitionReassignmentsResponse
	for _, t := range resp.Topics {
		for _, pr := range t.Partitions {
			out = append(out, kadm.ListPartitionReassignmentsResponse{Topic: t.Topic, Partition: pr.Partition,
				Replicas: pr.Replicas, AddingReplicas: pr.AddingReplicas, RemovingReplicas: pr.RemovingReplicas})
		}
	}
	slices.SortFunc(out, func(a, b kadm.ListPartitionReassignmentsResponse) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return out, nil
}

func (p *Proxy) answerReassignments(w http.ResponseWriter, req *http.Request, cluster, self string, topics []kmsg.ListPartitionReassignmentsRequestTopic) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	rs, err := p.listReassignments(ctx, topics)
	if err != nil {
		writeError(w, err)
		return
	}
	cs := clusterSelf(req)
	data := make([]reassignmentData, 0, len(rs))
	for _, r := range rs {
		data = append(data, newReassignmentData(cs, cluster, r))
	}
	writeJSON(w, http.StatusOK, newList("KafkaReassignmentList", cs+self, data))
}

func (p *Proxy) listAllReassignments(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	p.answerReassignments(w, req, md.Cluster, "/topics/-/partitions/-/reassignment", nil)
}

// listTopicReassignments lists a topic's: one that does not exist is 404
// 40403 (ListPartitionReassignments would answer it with none).
func (p *Proxy) listTopicReassignments(w http.ResponseWriter, req *http.Request) {
	md, t, ok := p.topicMetadata(w, req)
	if !ok {
		return
	}
	rt := kmsg.NewListPartitionReassignmentsRequestTopic()
	rt.Topic = t.Topic
	for _, pd := range t.Partitions.Sorted() {
		rt.Partitions = append(rt.Partitions, pd.Partition)
	}
	p.answerReassignments(w, req, md.Cluster, "/topics/"+t.Topic+"/partitions/-/reassignment",
		[]kmsg.ListPartitionReassignmentsRequestTopic{rt})
}

// getReassignment answers a partition's reassignment: none in progress is
// 404, as Confluent's NotFoundException (a bare "HTTP 404 Not Found").
func (p *Proxy) getReassignment(w http.ResponseWriter, req *http.Request) {
	md, pd, ok := p.partition(w, req)
	if !ok {
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	rt := kmsg.NewListPartitionReassignmentsRequestTopic()
	rt.Topic, rt.Partitions = pd.Topic, []int32{pd.Partition}
	rs, err := p.listReassignments(ctx, []kmsg.ListPartitionReassignmentsRequestTopic{rt})
	if err != nil {
		writeError(w, err)
		return
	}
	for _, r := range rs {
		if r.Topic == pd.Topic && r.Partition == pd.Partition {
			writeJSON(w, http.StatusOK, newReassignmentData(clusterSelf(req), md.Cluster, r))
			return
		}
	}
	writeError(w, errNotFound("HTTP 404 Not Found"))
}

// listBrokerReplicas answers every replica the path's broker hosts, by
// topic and partition, from one Metadata of all topics.
func (p *Proxy) listBrokerReplicas(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	cluster, broker, err := p.brokerOfPath(ctx, req)
	var md kadm.Metadata
	if err == nil {
		md, err = p.kafka(ctx).admin.Metadata(fresh(ctx))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cs := clusterSelf(req)
	names := md.Topics.Names()
	slices.Sort(names)
	data := []replicaData{}
	for _, name := range names {
		t := md.Topics[name]
		if t.Err != nil {
			continue
		}
		for _, pd := range t.Partitions.Sorted() {
			if slices.Contains(pd.Replicas, broker) {
				data = append(data, newReplicaData(cs, cluster, pd, broker))
			}
		}
	}
	writeJSON(w, http.StatusOK, newList("KafkaReplicaList", cs+"/brokers/"+req.PathValue("broker_id")+"/partition-replicas", data))
}

type partitionOffsetsData struct {
	Kind           string           `json:"kind"`
	Metadata       resourceMetadata `json:"metadata"`
	ClusterID      string           `json:"cluster_id"`
	TopicName      string           `json:"topic_name"`
	PartitionID    int32            `json:"partition_id"`
	EarliestOffset int64            `json:"earliest_offset"`
	LatestOffset   int64            `json:"latest_offset"`
}

// getPartitionOffsets answers a partition's earliest and latest offsets
// (its log start offset and high watermark). offset_type takes only
// Confluent's one value, earliest_and_latest (the default); another is
// 400, as Confluent refuses it.
func (p *Proxy) getPartitionOffsets(w http.ResponseWriter, req *http.Request) {
	offsetType := "earliest_and_latest"
	if q := req.URL.Query(); q.Has("offset_type") {
		offsetType = q.Get("offset_type")
	}
	if offsetType != "earliest_and_latest" {
		writeError(w, errBadRequest("offset_type:"+offsetType+" is invalid"))
		return
	}
	md, pd, ok := p.partition(w, req)
	if !ok {
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	earliest, latest, err := p.partitionOffsets(ctx, pd.Topic, pd.Partition)
	if err != nil {
		writeError(w, err)
		return
	}
	pid := strconv.Itoa(int(pd.Partition))
	writeJSON(w, http.StatusOK, partitionOffsetsData{
		Kind: "KafkaPartitionWithOffsets",
		Metadata: resourceMetadata{Self: clusterSelf(req) + "/topics/" + pd.Topic + "/partitions/" + pid + "/offset",
			ResourceName: crn("kafka", md.Cluster, "topic", pd.Topic, "partition", pid, "offset_type", offsetType)},
		ClusterID: md.Cluster, TopicName: pd.Topic, PartitionID: pd.Partition,
		EarliestOffset: earliest, LatestOffset: latest,
	})
}

func (p *Proxy) partitionOffsets(ctx context.Context, topic string, partition int32) (int64, int64, error) {
	admin := p.kafka(ctx).admin
	start, err := admin.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	end, err := admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	s, ok1 := start.Lookup(topic, partition)
	e, ok2 := end.Lookup(topic, partition)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("restproxy: list offsets of %s-%d: not answered", topic, partition)
	}
	if s.Err != nil {
		return 0, 0, s.Err
	}
	if e.Err != nil {
		return 0, 0, e.Err
	}
	return s.Offset, e.Offset, nil
}
