package restproxy

import (
	"context"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The cluster resources: the proxy fronts one cluster, whose ID it learns
// from Metadata; every path under /v3/clusters/{cluster_id} is checked
// against it.
func (p *Proxy) routeClusters(mux *http.ServeMux) {
	mux.HandleFunc("GET /v3/clusters", p.listClusters)
	mux.HandleFunc("GET /v3/clusters/{cluster_id}", p.getCluster)
}

type clusterData struct {
	Kind                   string           `json:"kind"`
	Metadata               resourceMetadata `json:"metadata"`
	ClusterID              string           `json:"cluster_id"`
	Controller             *relationship    `json:"controller,omitempty"`
	ACLs                   relationship     `json:"acls"`
	Brokers                relationship     `json:"brokers"`
	BrokerConfigs          relationship     `json:"broker_configs"`
	ConsumerGroups         relationship     `json:"consumer_groups"`
	Topics                 relationship     `json:"topics"`
	PartitionReassignments relationship     `json:"partition_reassignments"`
}

func newClusterData(base string, md kadm.Metadata) clusterData {
	self := base + "/clusters/" + md.Cluster
	c := clusterData{
		Kind:                   "KafkaCluster",
		Metadata:               resourceMetadata{Self: self, ResourceName: crn("kafka", md.Cluster)},
		ClusterID:              md.Cluster,
		ACLs:                   related(self + "/acls"),
		Brokers:                related(self + "/brokers"),
		BrokerConfigs:          related(self + "/broker-configs"),
		ConsumerGroups:         related(self + "/consumer-groups"),
		Topics:                 related(self + "/topics"),
		PartitionReassignments: related(self + "/topics/-/partitions/-/reassignment"),
	}
	if md.Controller >= 0 {
		r := related(fmt.Sprintf("%s/brokers/%d", self, md.Controller))
		c.Controller = &r
	}
	return c
}

func (p *Proxy) listClusters(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.kafka(ctx).admin.BrokerMetadata(fresh(ctx))
	if err != nil {
		writeError(w, err)
		return
	}
	base := baseURL(req)
	writeJSON(w, http.StatusOK, newList("KafkaClusterList", base+"/clusters", []clusterData{newClusterData(base, md)}))
}

func (p *Proxy) getCluster(w http.ResponseWriter, req *http.Request) {
	ctx, cancel := p.opContext(req)
	defer cancel()
	md, err := p.clusterMetadata(ctx, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, newClusterData(baseURL(req), md))
}

// clusterMetadata reads the cluster's metadata (of topics, when named;
// none when topics is nil) and checks the path's {cluster_id} is this
// cluster's: another is 404, as Confluent answers a cluster it does not
// know.
func (p *Proxy) clusterMetadata(ctx context.Context, req *http.Request, topics ...string) (kadm.Metadata, error) {
	var md kadm.Metadata
	var err error
	if len(topics) == 0 {
		md, err = p.kafka(ctx).admin.BrokerMetadata(fresh(ctx))
	} else {
		md, err = p.kafka(ctx).admin.Metadata(fresh(ctx), topics...)
	}
	if err != nil {
		return md, err
	}
	if id := req.PathValue("cluster_id"); id != md.Cluster {
		return md, errClusterNotFound(id)
	}
	return md, nil
}

// clusterSelf is the path's cluster as a link.
func clusterSelf(req *http.Request) string {
	return baseURL(req) + "/clusters/" + req.PathValue("cluster_id")
}

// fresh makes kadm's Metadata ask the cluster rather than answer from
// franz-go's metadata cache, which it does while the cache is younger
// than MetadataMinAge (5 s): a topic just created, or partitions just
// added, would be missing from the next answer. kadm's switch for this is
// the context asking for authorized operations (they are then read too).
func fresh(ctx context.Context) context.Context { return kadm.WithAuthorizedOps(ctx) }
