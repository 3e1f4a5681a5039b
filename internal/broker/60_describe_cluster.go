package broker

// DescribeCluster (key 60), versions 0-2.
//
// The cluster ID, the controller (this node: combined mode) and the
// registered brokers with their endpoint on the caller's listener. v1's
// EndpointType 1 (brokers) is the only kind served; 2 (controllers)
// answers UNSUPPORTED_ENDPOINT_TYPE, as a broker does in Kafka. v2
// (KIP-1073) lists the registered but fenced brokers too when asked
// (IncludeFencedBrokers), with IsFenced; Metadata never lists them.
//
// Authorization (authz.go): none to be answered, as Kafka's broker. The
// cluster's authorized operations (KIP-430), when asked for, are 0 without
// DESCRIBE on the cluster, else what the principal may do there (every
// cluster operation without an authorizer); -2147483648 when not asked
// for. Kafka's ALTER check for a controller's endpoints (KIP-919) does
// not arise: those are not served.

import (
	"slices"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeCluster, min: 0, max: 2, handle: typed(handleDescribeCluster)})
}

func handleDescribeCluster(b *Broker, c *conn, req *kmsg.DescribeClusterRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.EndpointType = req.EndpointType
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = kmsg.StringPtr("this broker answers for broker endpoints only")
		return resp, nil
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	resp.ClusterID = img.ClusterID()
	resp.ControllerID = b.clientControllerID(img)
	for _, mb := range b.metadataBrokers(img, c.listener) {
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.Host, db.Port, db.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		resp.Brokers = append(resp.Brokers, db)
	}
	if req.IncludeFencedBrokers {
		resp.Brokers = append(resp.Brokers, fencedBrokers(img, c.listener)...)
		slices.SortFunc(resp.Brokers, func(x, y kmsg.DescribeClusterResponseBroker) int { return int(x.NodeID) - int(y.NodeID) })
	}
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0
		if b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
			resp.ClusterAuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeCluster, auth.ClusterName)
		}
	}
	return resp, nil
}

// fencedBrokers are the registered brokers that are fenced, with their
// endpoint on listener.
func fencedBrokers(img *metadata.Image, listener string) []kmsg.DescribeClusterResponseBroker {
	var out []kmsg.DescribeClusterResponseBroker
	for _, br := range img.Brokers() {
		if !br.Fenced {
			continue
		}
		db := kmsg.NewDescribeClusterResponseBroker()
		db.NodeID, db.IsFenced = int32(br.NodeID), true
		for _, ep := range br.Endpoints {
			if ep.Name == listener {
				db.Host, db.Port = ep.Host, ep.Port
			}
		}
		if br.Rack != "" {
			db.Rack = kmsg.StringPtr(br.Rack)
		}
		out = append(out, db)
	}
	return out
}
