package broker

// DescribeQuorum (key 55), versions 0-2, on every listener.
//
// The metadata quorum, topic __cluster_metadata partition 0, as its leader
// sees it (KIP-595, KIP-642): the leader's ID, its epoch (the Raft term),
// the high watermark, and each voter's and observer's log end offset, what
// kafka-metadata-quorum.sh describe --status and --replication print. Our
// quorum is hashicorp/raft, whose followers' match indexes are not public,
// so every offset is a metadata offset (the Raft index of the last applied
// metadata batch, the space of BrokerHeartbeat's CurrentMetadataOffset) and
// a node's log end offset is what its last BrokerHeartbeat reported applied
// (controller.DescribeQuorum), or for a controller-only node, which sends
// none, its last log index as the leader's replication to it last heard it
// (capped at the high watermark): a caught-up node stands at the high
// watermark, and "lag" counts Raft entries, not records.
//
// As in Kafka 4, a broker that is not the active controller forwards the
// request to it (KafkaApis forwards DescribeQuorum), and a controller
// listener of a node that is not the leader (an admin client bootstrapped
// to the controllers, KIP-919) answers NOT_LEADER_OR_FOLLOWER for the
// partition. Any other topic or partition is UNKNOWN_TOPIC_OR_PARTITION.
//
// Authorization (authz.go): DESCRIBE on the cluster, else the response's
// error is CLUSTER_AUTHORIZATION_FAILED, checked before forwarding.
//
// v1 (KIP-836) adds LastFetchTimestamp and LastCaughtUpTimestamp: when the
// leader last heard the node's heartbeat, and the last time the node was
// known to be caught up (controller.ReplicaState); the leader's own are now,
// as Kafka's leader reports itself. v2 (KIP-853) adds the top-level and
// partition error messages, each replica's directory ID and the voters'
// endpoints (Nodes). The directory IDs are Kafka's zero UUID: Samsa keeps
// none, in a static quorum as in one that AddRaftVoter and RemoveRaftVoter
// change, whose voters and observers show here after every change (the
// Raft configuration is read on each call); Nodes names each
// voter's controller listener, or for the single node, which has none, the
// listener the request came in on.

import (
	"errors"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeQuorum, min: 0, max: 2, handle: typed(handleDescribeQuorum)})
}

func handleDescribeQuorum(b *Broker, c *conn, req *kmsg.DescribeQuorumRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
		resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.describeQuorum(c, req) })
}

func (b *Broker) describeQuorum(c *conn, req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !asksForMetadataPartition(req) {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeQuorumResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeQuorumResponseTopicPartition()
				rp.Partition, rp.LeaderID, rp.ErrorCode = p.Partition, -1, kerr.UnknownTopicOrPartition.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = metadata.ClusterMetadataTopic
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	st, err := b.ctrl.DescribeQuorum()
	switch {
	case errors.Is(err, controller.ErrNotActive):
		rp.ErrorCode, rp.LeaderID = kerr.NotLeaderForPartition.Code, int32(b.ctrl.ControllerID())
		rp.ErrorMessage = kmsg.StringPtr("this node is not the leader of the metadata quorum")
	case err != nil:
		resp.ErrorCode, resp.ErrorMessage = kerr.UnknownServerError.Code, kmsg.StringPtr(err.Error())
		return resp
	default:
		rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = int32(st.LeaderID), int32(st.LeaderEpoch), st.HighWatermark
		rp.CurrentVoters = replicaStates(st.Voters)
		rp.Observers = replicaStates(st.Observers)
		resp.Nodes = b.quorumNodes(c)
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}

// asksForMetadataPartition: the request names exactly __cluster_metadata
// partition 0, as Kafka's raft client requires.
func asksForMetadataPartition(req *kmsg.DescribeQuorumRequest) bool {
	return len(req.Topics) == 1 && req.Topics[0].Topic == metadata.ClusterMetadataTopic &&
		len(req.Topics[0].Partitions) == 1 && req.Topics[0].Partitions[0].Partition == 0
}

func replicaStates(rs []controller.ReplicaState) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(rs))
	for _, r := range rs {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.LogEndOffset = int32(r.NodeID), r.LogEndOffset
		if !r.LastFetch.IsZero() {
			s.LastFetchTimestamp = r.LastFetch.UnixMilli()
		}
		if !r.LastCaughtUp.IsZero() {
			s.LastCaughtUpTimestamp = r.LastCaughtUp.UnixMilli()
		}
		out = append(out, s)
	}
	return out
}

// quorumNodes are the voters' endpoints (v2): their controller listeners in
// a quorum, the request's listener on the single node.
func (b *Broker) quorumNodes(c *conn) []kmsg.DescribeQuorumResponseNode {
	var out []kmsg.DescribeQuorumResponseNode
	if !b.cfg.quorum.cluster() {
		l := b.advertised(c.listener)
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = b.cfg.NodeID
		ln := kmsg.NewDescribeQuorumResponseNodeListener()
		ln.Name, ln.Host, ln.Port = c.listener, l.Host, uint16(l.Port)
		n.Listeners = append(n.Listeners, ln)
		return append(out, n)
	}
	for _, v := range b.ctrl.Voters() {
		host, port, err := net.SplitHostPort(v.Addr)
		p, perr := strconv.ParseUint(port, 10, 16)
		if err != nil || perr != nil {
			continue // the configuration holds host:port addresses
		}
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = int32(v.ID)
		ln := kmsg.NewDescribeQuorumResponseNodeListener()
		ln.Name, ln.Host, ln.Port = b.cfg.quorum.listeners[0], host, uint16(p)
		n.Listeners = append(n.Listeners, ln)
		out = append(out, n)
	}
	return out
}
