package broker

// AddRaftVoter (key 80), versions 0-1 (KIP-853), on every listener.
//
// Adds a controller to the voters of the metadata quorum, what
// kafka-metadata-quorum.sh add-controller sends: the new controller was
// started with controller.quorum.bootstrap.servers and is not among the
// initial voters, so it runs as a Raft non-voter at its controller
// listener. The active controller (controller.AddVoter) adds it to the
// Raft configuration as a non-voter at the request's listener of our
// controller.listener.names, waits until its log has caught up, and
// promotes it, answering once the new configuration is committed. v1's
// AckWhenCommitted asks for no less: a v1 request that would accept an
// earlier answer gets the same one.
//
// Errors, as Kafka's leader answers them: INCONSISTENT_CLUSTER_ID for
// another cluster's ID; INVALID_REQUEST when no listener has our
// controller listener's name, when another node of the quorum is at that
// address, or for a broker-only node (it follows the log at its
// inter-broker listener); NOT_LEADER_OR_FOLLOWER on a controller
// listener of a controller that is not the leader; UNSUPPORTED_VERSION
// for a static quorum (controller.quorum.voters, Kafka's kraft.version 0)
// or the single node; DUPLICATE_VOTER for a voter; REQUEST_TIMED_OUT while
// another voter change runs, or when the new controller has not caught up
// within timeout_ms (it stays a non-voter; a retry promotes it).
//
// A broker that is not the active controller forwards the request, as
// Kafka's KafkaApis forwards it (forwardToControllerOrFail).
// VoterDirectoryId is not checked: Samsa's Raft configuration knows
// voters by node ID alone (docs/DESIGN-controller.md).
//
// Authorization (authz.go): ALTER on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED (Kafka's ControllerApis.handleAddRaftVoter),
// checked before forwarding.

import (
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AddRaftVoter, min: 0, max: 1, handle: typed(handleAddRaftVoter)})
}

func handleAddRaftVoter(b *Broker, c *conn, req *kmsg.AddRaftVoterRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		return addRaftVoterResponse(req, kerr.ClusterAuthorizationFailed, ""), nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.addRaftVoter(req) })
}

func (b *Broker) addRaftVoter(req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse {
	if req.ClusterID != nil && *req.ClusterID != b.ctrl.Image().ClusterID() {
		return addRaftVoterResponse(req, kerr.InconsistentClusterID, "")
	}
	if !b.cfg.quorum.cluster() {
		return addRaftVoterResponse(req, kerr.UnsupportedVersion, "the single node's quorum is in process and cannot change")
	}
	addr := ""
	for _, l := range req.Listeners {
		if b.cfg.quorum.isControllerListener(l.Name) && addr == "" {
			addr = net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
		}
	}
	if addr == "" {
		return addRaftVoterResponse(req, kerr.InvalidRequest, "the new voter's listeners name none of the controller listeners "+strings.Join(b.cfg.quorum.listeners, ","))
	}
	ctx, cancel := b.adminContext(req.TimeoutMillis)
	defer cancel()
	code, msg := b.ctrl.AddVoter(ctx, model.NodeID(req.VoterID), addr)
	return addRaftVoterResponse(req, quorumLeaderError(code), msg)
}

func addRaftVoterResponse(req *kmsg.AddRaftVoterRequest, code *kerr.Error, msg string) *kmsg.AddRaftVoterResponse {
	resp := req.ResponseKind().(*kmsg.AddRaftVoterResponse)
	if code != nil {
		resp.ErrorCode = code.Code
		if msg == "" {
			msg = code.Description
		}
		resp.ErrorMessage = kmsg.StringPtr(msg)
	}
	return resp
}

// quorumLeaderError is the controller's error as Kafka's Raft leader
// answers it: a node that is not the leader says NOT_LEADER_OR_FOLLOWER,
// not NOT_CONTROLLER.
func quorumLeaderError(code *kerr.Error) *kerr.Error {
	if code == kerr.NotController {
		return kerr.NotLeaderForPartition
	}
	return code
}
