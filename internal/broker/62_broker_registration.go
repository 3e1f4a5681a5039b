package broker

// BrokerRegistration (key 62), versions 0-4, controller listeners only.
//
// A broker registers with the active controller when it starts (KIP-631):
// its node ID, an incarnation ID new at each process start, its client
// listeners and rack. The answer is its broker epoch, which its heartbeats
// and AlterPartition requests carry. A registered broker is fenced until
// its heartbeats show it has caught up with the metadata. A controller
// that is not active answers NOT_CONTROLLER, and the broker tries the new
// one; a broker of another cluster gets INCONSISTENT_CLUSTER_ID.
//
// The broker lists the feature levels it supports (KIP-584); one that
// does not support every finalized level is refused with
// UNSUPPORTED_VERSION and Kafka's message, and the controller finalizes
// no level a registered broker does not support (UpdateFeatures).
//
// LogDirs (v2+, KIP-858): the directory IDs of the broker's online log
// directories; replicas the metadata assigns to other directories of it
// are offline (logdirs.go).
//
// Not served: IsMigratingZkBroker (no ZooKeeper), PreviousBrokerEpoch
// (KIP-966's clean shutdown detection: a new incarnation always replaces
// the old).
//
// Authorization (authz.go): CLUSTER_ACTION on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED. Nodes ask as ANONYMOUS over PLAINTEXT, so
// a cluster with an authorizer has User:ANONYMOUS in super.users.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.BrokerRegistration, min: 0, max: 4, controllerOnly: true, handle: typed(handleBrokerRegistration)})
}

func handleBrokerRegistration(b *Broker, c *conn, req *kmsg.BrokerRegistrationRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.BrokerRegistrationResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	reg := controller.Registration{
		NodeID: model.NodeID(req.BrokerID), ClusterID: req.ClusterID,
		Incarnation: metadata.FormatUUID(model.TopicID(req.IncarnationID)),
	}
	if req.Rack != nil {
		reg.Rack = *req.Rack
	}
	reg.LogDirs = dirIDsFromWire(req.LogDirs)
	for _, f := range req.Features {
		reg.Features = append(reg.Features, metadata.FeatureRange{Name: f.Name, Min: f.MinSupportedVersion, Max: f.MaxSupportedVersion})
	}
	for _, l := range req.Listeners {
		reg.Endpoints = append(reg.Endpoints, metadata.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port), SecurityProtocol: securityProtocolName(l.SecurityProtocol)})
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), controllerRequestTimeout)
	defer cancel()
	epoch, err, _ := b.ctrl.RegisterBroker(ctx, reg)
	if err != nil {
		resp.ErrorCode = err.Code
		return resp, nil
	}
	resp.BrokerEpoch = epoch
	return resp, nil
}

// securityProtocolName and securityProtocolID map Kafka's security
// protocol IDs, as BrokerRegistration carries them.
func securityProtocolName(id int16) string {
	switch id {
	case 0:
		return "PLAINTEXT"
	case 1:
		return "SSL"
	case 2:
		return "SASL_PLAINTEXT"
	case 3:
		return "SASL_SSL"
	}
	return "UNKNOWN"
}

func securityProtocolID(name string) int16 {
	for id := int16(0); id <= 3; id++ {
		if securityProtocolName(id) == name {
			return id
		}
	}
	return -1
}
