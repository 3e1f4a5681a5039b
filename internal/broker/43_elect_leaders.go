package broker

// ElectLeaders (key 43), versions 0-2.
//
// Moves partition leadership on request (KIP-183, kafka-leader-election.sh,
// kadm's ElectLeaders): PREFERRED (0) gives each partition to its
// preferred replica, the first of its replica list, when that replica is
// in the ISR and unfenced; UNCLEAN (1, KIP-460) gives a partition without
// a live leader an ISR member, or else any live replica, with an ISR of
// that replica alone, losing what it lacks (logged as such). The
// controller decides and commits (controller.ElectLeaders); a broker that
// is not the active controller forwards the request (forward.go) and
// answers once its own image shows the new leaders, and the active
// controller applies its image before it answers, so a produce right
// after goes to the new leader.
//
// Errors per partition, as Kafka's controller: ELECTION_NOT_NEEDED when
// the preferred replica already leads (PREFERRED) or a live leader exists
// (UNCLEAN); PREFERRED_LEADER_NOT_AVAILABLE when the preferred replica is
// out of the ISR, fenced or shutting down; ELIGIBLE_LEADERS_NOT_AVAILABLE
// when no replica is alive; UNKNOWN_TOPIC_OR_PARTITION. A null topic list
// means every partition, and is answered with the partitions that were
// elected or could not be, without the ELECTION_NOT_NEEDED ones. An error
// of the whole request (INVALID_REQUEST for an election type Kafka does not
// know, NOT_CONTROLLER, REQUEST_TIMED_OUT when TimeoutMillis runs out
// before the commit; a zero or negative timeout leaves the bound to the
// controller) is the top-level ErrorCode and every named partition's, as
// in Kafka's error response. v0 has no election type (PREFERRED) and no
// top-level error; v2 only adds flexible encoding.
//
// Authorization (authz.go): ALTER on the cluster (Kafka's documentation
// says CLUSTER_ACTION; its code checks ALTER), else the request fails as
// a whole with CLUSTER_AUTHORIZATION_FAILED, checked by the broker the
// client reached before it forwards.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ElectLeaders, min: 0, max: 2, handle: typed(handleElectLeaders)})
}

func handleElectLeaders(b *Broker, c *conn, req *kmsg.ElectLeadersRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		return electLeadersFailed(req, resp, kerr.ClusterAuthorizationFailed, ""), nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.electLeaders(req) })
}

func (b *Broker) electLeaders(req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	var topics []controller.ElectTopic // nil: every partition
	if req.Topics != nil {
		topics = make([]controller.ElectTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			topics = append(topics, controller.ElectTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	ctx, cancel := b.adminContext(req.TimeoutMillis)
	defer cancel()
	results, code, msg := b.ctrl.ElectLeaders(ctx, controller.ElectionType(req.ElectionType), topics)
	if code != nil {
		return electLeadersFailed(req, resp, code, msg)
	}
	b.catchUpMetadata()
	for _, tr := range results {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = tr.Topic
		for _, pr := range tr.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition = pr.Partition
			if pr.Err != nil {
				rp.ErrorCode = pr.Err.Code
			}
			if pr.Message != "" {
				rp.ErrorMessage = kmsg.StringPtr(pr.Message)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// electLeadersFailed answers a request that failed as a whole: the
// top-level error (v1+) and the same error for every partition named, so
// a v0 client, which has no top-level error, sees it too.
func electLeadersFailed(req *kmsg.ElectLeadersRequest, resp *kmsg.ElectLeadersResponse, code *kerr.Error, msg string) *kmsg.ElectLeadersResponse {
	resp.ErrorCode = code.Code
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code.Code
			if msg != "" {
				rp.ErrorMessage = kmsg.StringPtr(msg)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
