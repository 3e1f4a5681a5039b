package restproxy

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The topic resources: list and get from Metadata, create and delete with
// CreateTopics and DeleteTopics.
func (p *Proxy) routeTopics(mux *http.ServeMux) {
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/topics", p.listTopics)
	mux.HandleFunc("POST /v3/clusters/{cluster_id}/topics", p.createTopic)
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/topics/{topic_name}", p.getTopic)
	mux.HandleFunc("DELETE /v3/clusters/{cluster_id}/topics/{topic_name}", p.deleteTopic)
	mux.HandleFunc("PATCH /v3/clusters/{cluster_id}/topics/{topic_name}", p.updatePartitionCount)
}

type topicData struct {
	Kind                   string           `json:"kind"`
	Metadata               resourceMetadata `json:"metadata"`
	ClusterID              string           `json:"cluster_id"`
	TopicName              string           `json:"topic_name"`
	IsInternal             bool             `json:"is_internal"`
	ReplicationFactor      int              `json:"replication_factor"`
	PartitionsCount        int              `json:"partitions_count"`
	Partitions             relationship     `json:"partitions"`
	Configs                relationship     `json:"configs"`
	PartitionReassignments relationship     `json:"partition_reassignments"`
	AuthorizedOperations   []string         `json:"authorized_operations,omitempty"`
}

func newTopicData(clusterSelf, cluster, topic string, internal bool, partitions, rf int) topicData {
	self := clusterSelf + "/topics/" + topic
	return topicData{
		Kind:                   "KafkaTopic",
		Metadata:               resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "topic", topic)},
		ClusterID:              cluster,
		TopicName:              topic,
		IsInternal:             internal,
		ReplicationFactor:      rf,
		PartitionsCount:        partitions,
		Partitions:             related(self + "/partitions"),
		Configs:                related(self + "/configs"),
		PartitionReassignments: related(self + "/partitions/-/reassignment"),
	}
}

// topicDataOf describes a topic from its metadata; its replication
// factor is its first partition's replica count, as Confluent's is.
func topicDataOf(clusterSelf, cluster string, t kadm.TopicDetail) topicData {
	rf := 0
	if p, ok := t.Partitions[0]; ok {
		rf = len(p.Replicas)
	}
	return newTopicData(clusterSelf, cluster, t.Topic, t.IsInternal, len(t.Partitions), rf)
}

func (p *Proxy) listTopics(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.kafka(ctx).admin.Metadata(fresh(ctx)) // every topic, the internal ones too, as Confluent lists them
	if err == nil && md.Cluster != req.PathValue("cluster_id") {
		err = errClusterNotFound(req.PathValue("cluster_id"))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cs := clusterSelf(req)
	names := md.Topics.Names()
	slices.Sort(names)
	data := make([]topicData, 0, len(names))
	for _, name := range names {
		if t := md.Topics[name]; t.Err == nil {
			data = append(data, topicDataOf(cs, md.Cluster, t))
		}
	}
	writeJSON(w, http.StatusOK, newList("KafkaTopicList", cs+"/topics", data))
}

// topicMetadata reads one topic's metadata: a topic that does not exist
// is Kafka's UNKNOWN_TOPIC_OR_PARTITION, which maps to 404 40403.
func (p *Proxy) topicMetadata(w http.ResponseWriter, req *http.Request) (kadm.Metadata, kadm.TopicDetail, bool) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	name := req.PathValue("topic_name")
	md, err := p.clusterMetadata(ctx, req, name)
	if err != nil {
		writeError(w, err)
		return md, kadm.TopicDetail{}, false
	}
	t, ok := md.Topics[name]
	if !ok {
		writeError(w, errTopicNotFound())
		return md, t, false
	}
	if t.Err != nil {
		writeError(w, t.Err)
		return md, t, false
	}
	return md, t, true
}

// getTopic answers a topic; with include_authorized_operations=true, the
// operations the proxy's principal may perform on it too (Metadata's
// topic authorized operations, KIP-430), as Confluent adds them.
func (p *Proxy) getTopic(w http.ResponseWriter, req *http.Request) {
	withOps := false
	if q := req.URL.Query(); q.Has("include_authorized_operations") {
		v, err := strconv.ParseBool(q.Get("include_authorized_operations"))
		if err != nil {
			writeError(w, errBadRequest("Bad Request: include_authorized_operations must be true or false"))
			return
		}
		withOps = v
	}
	md, t, ok := p.topicMetadata(w, req)
	if !ok {
		return
	}
	d := topicDataOf(clusterSelf(req), md.Cluster, t)
	if withOps {
		ops := slices.Clone(t.AuthorizedOperations)
		slices.Sort(ops)
		d.AuthorizedOperations = []string{}
		for _, op := range ops {
			d.AuthorizedOperations = append(d.AuthorizedOperations, op.String())
		}
	}
	writeJSON(w, http.StatusOK, d)
}

// createTopicRequest is the spec's CreateTopicRequestData.
type createTopicRequest struct {
	TopicName           string              `json:"topic_name"`
	PartitionsCount     *int64              `json:"partitions_count"`
	ReplicationFactor   *int64              `json:"replication_factor"`
	ReplicasAssignments map[string][]int32  `json:"replicas_assignments"`
	Configs             []createTopicConfig `json:"configs"`
	ValidateOnly        bool                `json:"validate_only"`
}

type createTopicConfig struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
}

// check validates the body; it returns the partition count and
// replication factor to ask for (-1: the broker's default) and the
// configs.
func (r *createTopicRequest) check() (int32, int16, map[string]*string, *Error) {
	if strings.TrimSpace(r.TopicName) == "" {
		return 0, 0, nil, errBadRequest("Bad Request: topic_name is required")
	}
	partitions, rf := int32(-1), int16(-1)
	if len(r.ReplicasAssignments) > 0 {
		// Kafka takes an assignment instead of a count and a factor,
		// as Confluent's create refuses the three together.
		if r.PartitionsCount != nil || r.ReplicationFactor != nil {
			return 0, 0, nil, errBadRequest("Bad Request: replicas_assignments cannot be given with partitions_count or replication_factor")
		}
		configs, e := r.configMap()
		return partitions, rf, configs, e
	}
	if r.PartitionsCount != nil {
		if *r.PartitionsCount < 1 || *r.PartitionsCount > math.MaxInt32 {
			return 0, 0, nil, errBadRequest(fmt.Sprintf("Bad Request: partitions_count %d is not a positive 32-bit number", *r.PartitionsCount))
		}
		partitions = int32(*r.PartitionsCount)
	}
	if r.ReplicationFactor != nil {
		if *r.ReplicationFactor < 1 || *r.ReplicationFactor > math.MaxInt16 {
			return 0, 0, nil, errBadRequest(fmt.Sprintf("Bad Request: replication_factor %d is not a positive 16-bit number", *r.ReplicationFactor))
		}
		rf = int16(*r.ReplicationFactor)
	}
	configs, e := r.configMap()
	return partitions, rf, configs, e
}

func (r *createTopicRequest) configMap() (map[string]*string, *Error) {
	configs := make(map[string]*string, len(r.Configs))
	for _, c := range r.Configs {
		if c.Name == "" {
			return nil, errBadRequest("Bad Request: a config without a name")
		}
		if _, dup := configs[c.Name]; dup {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: config %s given twice", c.Name))
		}
		configs[c.Name] = c.Value
	}
	return configs, nil
}

// assignment is replicas_assignments as CreateTopics' replica
// assignment: partitions 0..n-1, each named once, each with a replica
// list (the broker checks the brokers exist and the lists agree in
// length).
func (r *createTopicRequest) assignment() ([]kmsg.CreateTopicsRequestTopicReplicaAssignment, *Error) {
	n := len(r.ReplicasAssignments)
	out := make([]kmsg.CreateTopicsRequestTopicReplicaAssignment, n)
	seen := make([]bool, n)
	for key, replicas := range r.ReplicasAssignments {
		id, err := strconv.ParseInt(key, 10, 32)
		if err != nil || id < 0 || id >= int64(n) || seen[id] {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: replicas_assignments key %q is not one of the partitions 0..%d", key, n-1))
		}
		if len(replicas) == 0 {
			return nil, errBadRequest(fmt.Sprintf("Bad Request: replicas_assignments of partition %s is empty", key))
		}
		seen[id] = true
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(id), replicas
		out[id] = a
	}
	return out, nil
}

func (p *Proxy) createTopic(w http.ResponseWriter, req *http.Request) {
	var body createTopicRequest
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	partitions, rf, configs, e := body.check()
	if e != nil {
		writeError(w, e)
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(body.ReplicasAssignments) > 0 {
		p.createTopicAssigned(ctx, w, req, md.Cluster, &body, configs)
		return
	}
	var resp kadm.CreateTopicResponse
	if body.ValidateOnly {
		var all kadm.CreateTopicResponses
		if all, err = p.kafka(ctx).admin.ValidateCreateTopics(ctx, partitions, rf, configs, body.TopicName); err == nil {
			resp, err = all.On(body.TopicName, nil)
		}
	} else {
		resp, err = p.kafka(ctx).admin.CreateTopic(ctx, partitions, rf, configs, body.TopicName)
	}
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		writeError(w, withDetail(err, resp.ErrMessage))
		return
	}
	writeJSON(w, http.StatusCreated, newTopicData(clusterSelf(req), md.Cluster, body.TopicName, false,
		int(resp.NumPartitions), int(resp.ReplicationFactor)))
}

func (p *Proxy) deleteTopic(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	if _, err := p.clusterMetadata(ctx, req); err != nil {
		writeError(w, err)
		return
	}
	resp, err := p.kafka(ctx).admin.DeleteTopic(ctx, req.PathValue("topic_name"))
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		writeError(w, withDetail(err, resp.ErrMessage))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// withDetail maps a Kafka error and appends the broker's own message to
// it, which says more than the code's description (which config, which
// limit).
func withDetail(err error, detail string) error {
	e := kafkaError(err)
	if detail != "" && e.Code != codeTopicNotFound {
		e.Message += " " + detail
	}
	return e
}

// createTopicAssigned creates a topic with replicas_assignments: kadm's
// helpers take counts only, so the CreateTopics request is made here.
func (p *Proxy) createTopicAssigned(ctx context.Context, w http.ResponseWriter, req *http.Request, cluster string, body *createTopicRequest, configs map[string]*string) {
	assignment, e := body.assignment()
	if e != nil {
		writeError(w, e)
		return
	}
	cr := kmsg.NewPtrCreateTopicsRequest()
	cr.TimeoutMillis = int32(p.cfg.Timeout.Milliseconds())
	cr.ValidateOnly = body.ValidateOnly
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor, t.ReplicaAssignment = body.TopicName, -1, -1, assignment
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = name, configs[name]
		t.Configs = append(t.Configs, c)
	}
	cr.Topics = append(cr.Topics, t)
	resp, err := cr.RequestWith(ctx, p.kafka(ctx).client)
	if err == nil && len(resp.Topics) != 1 {
		err = fmt.Errorf("restproxy: create topic %s: %d topics answered", body.TopicName, len(resp.Topics))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	rt := resp.Topics[0]
	if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
		writeError(w, withDetail(err, deref(rt.ErrorMessage)))
		return
	}
	writeJSON(w, http.StatusCreated, newTopicData(clusterSelf(req), cluster, body.TopicName, false,
		len(assignment), len(assignment[0].Replicas)))
}

// updatePartitionsRequest is the spec's UpdatePartitionCountRequestData.
type updatePartitionsRequest struct {
	PartitionsCount *int64 `json:"partitions_count"`
}

// updatePartitionCount raises a topic's partition count with
// CreatePartitions and answers the topic as it is then (200 KafkaTopic,
// as Confluent). A count not above the current one is Kafka's
// INVALID_PARTITIONS, 400 40002.
func (p *Proxy) updatePartitionCount(w http.ResponseWriter, req *http.Request) {
	var body updatePartitionsRequest
	if e := p.readBody(w, req, &body); e != nil {
		writeError(w, e)
		return
	}
	if body.PartitionsCount == nil {
		writeError(w, errBadRequest("Bad Request: partitions_count is required"))
		return
	}
	if n := *body.PartitionsCount; n < 1 || n > math.MaxInt32 {
		writeError(w, errBadRequest(fmt.Sprintf("Bad Request: partitions_count %d is not a positive 32-bit number", n)))
		return
	}
	md, t, ok := p.topicMetadata(w, req)
	if !ok {
		return
	}
	ctx, cancel := p.opContext(req)
	defer cancel()
	resps, err := p.kafka(ctx).admin.UpdatePartitions(ctx, int(*body.PartitionsCount), t.Topic)
	var resp kadm.CreatePartitionsResponse
	if err == nil {
		resp, err = resps.On(t.Topic, nil)
	}
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		writeError(w, withDetail(err, resp.ErrMessage))
		return
	}
	rf := 0
	if pd, ok := t.Partitions[0]; ok {
		rf = len(pd.Replicas)
	}
	writeJSON(w, http.StatusOK, newTopicData(clusterSelf(req), md.Cluster, t.Topic, t.IsInternal, int(*body.PartitionsCount), rf))
}
