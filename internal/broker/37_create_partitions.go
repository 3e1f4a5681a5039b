package broker

// CreatePartitions (key 37), versions 0-3.
//
// Grows topics to Count partitions (KIP-195). New partitions are placed
// round-robin over the registered brokers with the topic's replication
// factor, or by the request's Assignment, one replica list per new
// partition. The controller commits every valid topic of the request in
// one metadata batch; the broker applies the image before it answers, so
// the new partitions take produces as soon as the client has the response.
// validateOnly runs every check and commits nothing.
//
// Errors per topic: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS when
// Count is not above the current count, INVALID_REPLICA_ASSIGNMENT,
// INVALID_REPLICATION_FACTOR, INVALID_REQUEST for a topic given twice,
// INVALID_REQUEST for an internal topic (its coordinator hashes keys to
// partitions by the count), POLICY_VIOLATION for all past 10000 new
// partitions in one request,
// REQUEST_TIMED_OUT when TimeoutMillis runs out before the commit (a zero
// or negative timeout leaves the bound to the controller). Versions 2-3
// only add flexible encoding and the KIP-599 throttling error.
//
// Authorization (authz.go): ALTER on each topic, else
// TOPIC_AUTHORIZATION_FAILED for it, as Kafka's ControllerApis; a topic
// given twice is INVALID_REQUEST before any check. The checks run on the
// broker the client reached, before it forwards what they allowed.
//
// Not here: throttling of partition mutations (KIP-599; throttle is 0).

import (
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.CreatePartitions, min: 0, max: 3, handle: typed(handleCreatePartitions)})
}

func handleCreatePartitions(b *Broker, c *conn, req *kmsg.CreatePartitionsRequest) (kmsg.Response, error) {
	names := map[string]int{}
	for _, rt := range req.Topics {
		names[rt.Topic]++
	}
	may := b.authorizeEach(c, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(rt kmsg.CreatePartitionsRequestTopic) bool {
		return names[rt.Topic] > 1 || may(rt.Topic)
	})
	allowed := req
	if denied != nil {
		cp := *req
		cp.Topics, allowed = kept, &cp
	}
	admitted, throttled := allowed, []bool(nil)
	if !req.ValidateOnly {
		ok, refused := admitMutations(b, c, req.Version >= 3, allowed.Topics, b.addedPartitions)
		if refused != nil {
			cp := *allowed
			cp.Topics, admitted, throttled = ok, &cp, refused
		}
	}
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	if len(admitted.Topics) > 0 || len(req.Topics) == 0 {
		r, err := b.forwardOr(c, admitted, func() kmsg.Response { return b.createPartitionsHere(admitted) })
		if err != nil {
			return nil, err
		}
		resp = r.(*kmsg.CreatePartitionsResponse)
	}
	if throttled != nil {
		resp.Topics = mergeDenied(len(allowed.Topics), func(i int) (kmsg.CreatePartitionsResponseTopic, bool) {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic, st.ErrorCode = allowed.Topics[i].Topic, kerr.ThrottlingQuotaExceeded.Code
			st.ErrorMessage = kmsg.StringPtr(kerr.ThrottlingQuotaExceeded.Description)
			return st, throttled[i]
		}, resp.Topics)
	}
	if denied != nil {
		resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.CreatePartitionsResponseTopic, bool) {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic, st.ErrorCode = req.Topics[i].Topic, kerr.TopicAuthorizationFailed.Code
			return st, denied[i]
		}, resp.Topics)
	}
	return resp, nil
}

// createPartitionsHere grows the request's topics through this node's
// controller.
func (b *Broker) createPartitionsHere(req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	want := make([]controller.CreatePartitions, len(req.Topics))
	for i, rt := range req.Topics {
		want[i] = controller.CreatePartitions{Topic: rt.Topic, Count: rt.Count}
		for _, a := range rt.Assignment {
			want[i].Assignments = append(want[i].Assignments, a.Replicas)
		}
	}
	ctx, cancel := b.adminContext(req.TimeoutMillis)
	defer cancel()
	results := b.ctrl.CreatePartitions(ctx, want, req.ValidateOnly)
	if !req.ValidateOnly {
		b.catchUpMetadata()
	}
	for _, r := range results {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic, st.ErrorCode = r.Topic, r.ErrorCode
		if r.ErrorMessage != "" {
			st.ErrorMessage = kmsg.StringPtr(r.ErrorMessage)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
