package restproxy

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The broker resources, from Metadata. Broker configs are in
// http_broker_configs.go, a broker's replicas in http_reassignments.go.
func (p *Proxy) routeBrokers(mux *http.ServeMux) {
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/brokers", p.listBrokers)
	mux.HandleFunc("GET /v3/clusters/{cluster_id}/brokers/{broker_id}", p.getBroker)
}

type brokerData struct {
	Kind              string           `json:"kind"`
	Metadata          resourceMetadata `json:"metadata"`
	ClusterID         string           `json:"cluster_id"`
	BrokerID          int32            `json:"broker_id"`
	Host              string           `json:"host"`
	Port              int32            `json:"port"`
	Rack              *string          `json:"rack"`
	Configs           relationship     `json:"configs"`
	PartitionReplicas relationship     `json:"partition_replicas"`
}

func newBrokerData(clusterSelf, cluster string, b kadm.BrokerDetail) brokerData {
	id := strconv.Itoa(int(b.NodeID))
	self := clusterSelf + "/brokers/" + id
	return brokerData{
		Kind:              "KafkaBroker",
		Metadata:          resourceMetadata{Self: self, ResourceName: crn("kafka", cluster, "broker", id)},
		ClusterID:         cluster,
		BrokerID:          b.NodeID,
		Host:              b.Host,
		Port:              b.Port,
		Rack:              b.Rack,
		Configs:           related(self + "/configs"),
		PartitionReplicas: related(self + "/partition-replicas"),
	}
}

func (p *Proxy) listBrokers(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	cs := clusterSelf(req)
	data := make([]brokerData, 0, len(md.Brokers))
	for _, b := range md.Brokers {
		data = append(data, newBrokerData(cs, md.Cluster, b))
	}
	writeJSON(w, http.StatusOK, newList("KafkaBrokerList", cs+"/brokers", data))
}

func (p *Proxy) getBroker(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	raw := req.PathValue("broker_id")
	id, perr := strconv.ParseInt(raw, 10, 32)
	if perr == nil {
		for _, b := range md.Brokers {
			if b.NodeID == int32(id) {
				writeJSON(w, http.StatusOK, newBrokerData(clusterSelf(req), md.Cluster, b))
				return
			}
		}
	}
	writeError(w, errNotFound(fmt.Sprintf("Broker %s cannot be found.", raw)))
}
