package restproxy

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The partition resources and their replicas, from Metadata: the leader
// link points at the leader's replica, as Confluent's does. Reassignments
// are in http_reassignments.go.
func (p *Proxy) routePartitions(mux *http.ServeMux) {
	const partitions = "/v3/clusters/{cluster_id}/topics/{topic_name}/partitions"
	mux.HandleFunc("GET "+partitions, p.listPartitions)
	mux.HandleFunc("GET "+partitions+"/{partition_id}", p.getPartition)
	mux.HandleFunc("GET "+partitions+"/{partition_id}/replicas", p.listReplicas)
	mux.HandleFunc("GET "+partitions+"/{partition_id}/replicas/{broker_id}", p.getReplica)
}

type partitionData struct {
	Kind         string           `json:"kind"`
	Metadata     resourceMetadata `json:"metadata"`
	ClusterID    string           `json:"cluster_id"`
	TopicName    string           `json:"topic_name"`
	PartitionID  int32            `json:"partition_id"`
	Leader       *relationship    `json:"leader,omitempty"`
	Replicas     relationship     `json:"replicas"`
	Reassignment relationship     `json:"reassignment"`
}

func newPartitionData(clusterSelf, cluster string, pd kadm.PartitionDetail) partitionData {
	id := strconv.Itoa(int(pd.Partition))
	self := clusterSelf + "/topics/" + pd.Topic + "/partitions/" + id
	d := partitionData{
		Kind:         "KafkaPartition",
		Metadata:     resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "topic", pd.Topic, "partition", id)},
		ClusterID:    cluster,
		TopicName:    pd.Topic,
		PartitionID:  pd.Partition,
		Replicas:     related(self + "/replicas"),
		Reassignment: related(self + "/reassignment"),
	}
	if pd.Leader >= 0 { // no leader (offline): no link, as the spec's leader is optional
		r := related(self + "/replicas/" + strconv.Itoa(int(pd.Leader)))
		d.Leader = &r
	}
	return d
}

type replicaData struct {
	Kind        string           `json:"kind"`
	Metadata    resourceMetadata `json:"metadata"`
	ClusterID   string           `json:"cluster_id"`
	TopicName   string           `json:"topic_name"`
	PartitionID int32            `json:"partition_id"`
	BrokerID    int32            `json:"broker_id"`
	IsLeader    bool             `json:"is_leader"`
	IsInSync    bool             `json:"is_in_sync"`
	Broker      relationship     `json:"broker"`
}

func newReplicaData(clusterSelf, cluster string, pd kadm.PartitionDetail, broker int32) replicaData {
	pid, bid := strconv.Itoa(int(pd.Partition)), strconv.Itoa(int(broker))
	self := clusterSelf + "/topics/" + pd.Topic + "/partitions/" + pid + "/replicas/" + bid
	return replicaData{
		Kind:        "KafkaReplica",
		Metadata:    resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "topic", pd.Topic, "partition", pid, "replica", bid)},
		ClusterID:   cluster,
		TopicName:   pd.Topic,
		PartitionID: pd.Partition,
		BrokerID:    broker,
		IsLeader:    pd.Leader == broker,
		IsInSync:    slices.Contains(pd.ISR, broker),
		Broker:      related(clusterSelf + "/brokers/" + bid),
	}
}

func (p *Proxy) listPartitions(w http.ResponseWriter, req *http.Request) {
	md, t, ok := p.topicMetadata(w, req)
	if !ok {
		return
	}
	cs := clusterSelf(req)
	data := make([]partitionData, 0, len(t.Partitions))
	for _, pd := range t.Partitions.Sorted() {
		data = append(data, newPartitionData(cs, md.Cluster, pd))
	}
	writeJSON(w, http.StatusOK, newList("KafkaPartitionList", cs+"/topics/"+t.Topic+"/partitions", data))
}

// partition finds the path's {partition_id}: one the topic does not have
// is 404 40402, as Confluent answers.
func (p *Proxy) partition(w http.ResponseWriter, req *http.Request) (kadm.Metadata, kadm.PartitionDetail, bool) {
	md, t, ok := p.topicMetadata(w, req)
	if !ok {
		return md, kadm.PartitionDetail{}, false
	}
	id, err := strconv.ParseInt(req.PathValue("partition_id"), 10, 32)
	pd, found := t.Partitions[int32(id)]
	if err != nil || !found {
		writeError(w, errPartitionNotFound())
		return md, pd, false
	}
	return md, pd, true
}

func (p *Proxy) getPartition(w http.ResponseWriter, req *http.Request) {
	md, pd, ok := p.partition(w, req)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, newPartitionData(clusterSelf(req), md.Cluster, pd))
}

func (p *Proxy) listReplicas(w http.ResponseWriter, req *http.Request) {
	md, pd, ok := p.partition(w, req)
	if !ok {
		return
	}
	cs := clusterSelf(req)
	data := make([]replicaData, 0, len(pd.Replicas))
	for _, b := range pd.Replicas {
		data = append(data, newReplicaData(cs, md.Cluster, pd, b))
	}
	self := cs + "/topics/" + pd.Topic + "/partitions/" + strconv.Itoa(int(pd.Partition)) + "/replicas"
	writeJSON(w, http.StatusOK, newList("KafkaReplicaList", self, data))
}

func (p *Proxy) getReplica(w http.ResponseWriter, req *http.Request) {
	md, pd, ok := p.partition(w, req)
	if !ok {
		return
	}
	raw := req.PathValue("broker_id")
	id, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || !slices.Contains(pd.Replicas, int32(id)) {
		writeError(w, errNotFound("Replica "+raw+" cannot be found."))
		return
	}
	writeJSON(w, http.StatusOK, newReplicaData(clusterSelf(req), md.Cluster, pd, int32(id)))
}
