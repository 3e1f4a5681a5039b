package broker

// CreateTopics (key 19), versions 0-7.
//
// Each topic is handed to the controller (internal/controller), which
// validates it and commits every valid topic of the request in one metadata
// batch. The broker then applies the controller's image before it answers,
// so a client can produce to, or describe, a topic as soon as it has the
// response instead of racing the metadata propagation (one node runs both
// roles, so the image is at hand).
//
// Partitions and replication factor: given explicitly, as -1 to take
// num.partitions and default.replication.factor (KIP-464; the v4 gate is
// enforced by clients, Kafka's broker accepts -1 at every version and so
// does this one), or as a manual replica assignment with both -1. An
// assignment naming a partition twice is INVALID_REPLICA_ASSIGNMENT.
// Configs are the topic's overrides, checked against the topic catalog
// (INVALID_CONFIG); a config named twice takes its last value, as in Kafka.
// confluent.key/value.schema.validation=true on a broker without a schema
// registry is INVALID_CONFIG (schema_validation.go).
//
// validateOnly (v1+) runs every check and commits nothing. ErrorMessage is
// returned from v1. From v5 (KIP-525) each topic's partition count,
// replication factor and effective configs (value, read-only, source,
// sensitive) are returned, also when only validating. v7 returns the topic
// ID (KIP-516), zero when only validating.
//
// TimeoutMillis bounds the commit (REQUEST_TIMED_OUT when it runs out).
// Zero or a negative timeout means "do not wait" in Kafka's ZooKeeper-era
// semantics, where the response could come back before the topic was
// ready; here the commit is quick, so such a request is committed with the
// controller's own timeout and answered normally.
//
// Kafka's internal topics (__consumer_offsets, __transaction_state) and
// its metadata log (__cluster_metadata) cannot be created by a client:
// INVALID_REQUEST. The broker creates the internal topics itself on first
// use, with their own settings; in a quorum a broker that is not the active
// controller sends that creation to it as a CreateTopics on the controller
// listener, the one place a request may create them.
//
// Authorization (authz.go): CREATE on the cluster allows every topic;
// without it each topic needs CREATE on itself, else
// TOPIC_AUTHORIZATION_FAILED ("Authorization failed.", as Kafka's
// ControllerApis) and it is not created. A name given twice is the
// controller's INVALID_REQUEST before any check, as in Kafka. From v5 a
// created topic the principal may not DESCRIBE_CONFIGS is answered with
// topic_config_error_code TOPIC_AUTHORIZATION_FAILED and no partition
// count, replication factor or configs. The checks run on the broker the
// client reached, before it forwards what they allowed.
//
// Not here: CreateTopicPolicy (create.topic.policy.class.name), throttling
// of partition mutations (KIP-599, THROTTLING_QUOTA_EXCEEDED; throttle is
// 0).

import (
	"context"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.CreateTopics, min: 0, max: 7, handle: typed(handleCreateTopics)})
}

// itemError is a per-topic or per-resource error found by the broker
// before the controller sees the request.
type itemError struct {
	code int16
	msg  string
}

func handleCreateTopics(b *Broker, c *conn, req *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	allowed, denied := b.authorizeCreateTopics(c, req)
	admitted, throttled := allowed, []bool(nil)
	if !req.ValidateOnly {
		kept, refused := admitMutations(b, c, req.Version >= 6, allowed.Topics, b.newPartitions)
		if refused != nil {
			copied := *allowed
			copied.Topics, admitted, throttled = kept, &copied, refused
		}
	}
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	if len(admitted.Topics) > 0 || len(req.Topics) == 0 {
		r, err := b.forwardOr(c, admitted, func() kmsg.Response { return b.createTopicsHere(c, admitted) })
		if err != nil {
			return nil, err
		}
		resp = r.(*kmsg.CreateTopicsResponse)
	}
	if throttled != nil {
		resp.Topics = mergeDenied(len(allowed.Topics), func(i int) (kmsg.CreateTopicsResponseTopic, bool) {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode = allowed.Topics[i].Topic, kerr.ThrottlingQuotaExceeded.Code
			st.ErrorMessage = kmsg.StringPtr(kerr.ThrottlingQuotaExceeded.Description)
			return st, throttled[i]
		}, resp.Topics)
	}
	if denied != nil {
		resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.CreateTopicsResponseTopic, bool) {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode = req.Topics[i].Topic, kerr.TopicAuthorizationFailed.Code
			st.ErrorMessage = kmsg.StringPtr("Authorization failed.")
			return st, denied[i]
		}, resp.Topics)
	}
	if req.Version >= 5 {
		b.hideTopicConfigs(c, resp)
	}
	return resp, nil
}

// authorizeCreateTopics splits the request into what the principal may
// create and, per requested topic, whether it was denied (nil: none was).
// A name given twice is left to the controller to refuse.
func (b *Broker) authorizeCreateTopics(c *conn, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsRequest, []bool) {
	if b.permitsCluster(c, kmsg.ACLOperationCreate) {
		return req, nil
	}
	names := map[string]int{}
	for _, rt := range req.Topics {
		names[rt.Topic]++
	}
	may := b.authorizeEach(c, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(rt kmsg.CreateTopicsRequestTopic) bool {
		return names[rt.Topic] > 1 || may(rt.Topic)
	})
	if denied == nil {
		return req, nil
	}
	allowed := *req
	allowed.Topics = kept
	return &allowed, denied
}

// hideTopicConfigs takes the partition count, replication factor and
// configs out of the answer for topics the principal may not
// DESCRIBE_CONFIGS (v5+, Kafka's topic_config_error_code).
func (b *Broker) hideTopicConfigs(c *conn, resp *kmsg.CreateTopicsResponse) {
	if b.authorizer() == nil {
		return
	}
	may := b.authorizeEach(c, kmsg.ACLOperationDescribeConfigs, kmsg.ACLResourceTypeTopic)
	for i := range resp.Topics {
		st := &resp.Topics[i]
		if st.ErrorCode == kerr.TopicAuthorizationFailed.Code || may(st.Topic) {
			continue
		}
		st.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
		st.NumPartitions, st.ReplicationFactor, st.Configs = -1, -1, nil
	}
}

// createTopicsHere creates the request's topics through this node's
// controller.
func (b *Broker) createTopicsHere(c *conn, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	names := map[string]int{}
	for _, rt := range req.Topics {
		names[rt.Topic]++
	}
	local := make([]*itemError, len(req.Topics))
	var want []controller.CreateTopic
	for i, rt := range req.Topics {
		ct, ierr := createTopicRequest(rt)
		for _, cfg := range rt.Configs {
			if ierr == nil {
				ierr = b.schemaValidationRefusal(cfg.Name, cfg.Value)
			}
		}
		// On a controller listener the request is a peer broker's, creating
		// the internal topic its coordinator needs (forward.go createTopics).
		ct.Internal = c.controllerListener && metadata.IsInternalTopic(ct.Name)
		// A name given twice is the controller's to refuse, for every copy.
		if ierr != nil && names[rt.Topic] == 1 {
			local[i] = ierr
			continue
		}
		want = append(want, ct)
	}
	ctx, cancel := b.adminContext(req.TimeoutMillis)
	defer cancel()
	results := b.ctrl.CreateTopics(ctx, want, req.ValidateOnly)
	if !req.ValidateOnly {
		b.catchUpMetadata()
	}
	for i, rt := range req.Topics {
		if local[i] != nil {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = rt.Topic, local[i].code, kmsg.StringPtr(local[i].msg)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		resp.Topics = append(resp.Topics, createTopicsResponseTopic(results[0]))
		results = results[1:]
	}
	return resp
}

// createTopicRequest converts one requested topic for the controller.
func createTopicRequest(rt kmsg.CreateTopicsRequestTopic) (controller.CreateTopic, *itemError) {
	ct := controller.CreateTopic{Name: rt.Topic, NumPartitions: rt.NumPartitions, ReplicationFactor: rt.ReplicationFactor}
	if len(rt.ReplicaAssignment) > 0 {
		ct.Assignments = make(map[int32][]int32, len(rt.ReplicaAssignment))
		for _, a := range rt.ReplicaAssignment {
			if _, dup := ct.Assignments[a.Partition]; dup {
				return ct, &itemError{kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Partition %d is assigned more than once.", a.Partition)}
			}
			ct.Assignments[a.Partition] = a.Replicas
		}
	}
	if len(rt.Configs) > 0 {
		ct.Configs = make(map[string]*string, len(rt.Configs))
		for _, cfg := range rt.Configs {
			ct.Configs[cfg.Name] = cfg.Value
		}
	}
	return ct, nil
}

func createTopicsResponseTopic(r controller.CreateTopicResult) kmsg.CreateTopicsResponseTopic {
	st := kmsg.NewCreateTopicsResponseTopic()
	st.Topic, st.TopicID = r.Name, r.TopicID
	st.ErrorCode = r.ErrorCode
	if r.ErrorMessage != "" {
		st.ErrorMessage = kmsg.StringPtr(r.ErrorMessage)
	}
	st.NumPartitions, st.ReplicationFactor = r.NumPartitions, r.ReplicationFactor
	for _, d := range r.Configs {
		sc := kmsg.NewCreateTopicsResponseTopicConfig()
		sc.Name, sc.Value, sc.ReadOnly, sc.IsSensitive = d.Name, d.Value, d.ReadOnly, d.Sensitive
		sc.Source = int8(d.Source)
		st.Configs = append(st.Configs, sc)
	}
	return st
}

// adminContext bounds a metadata change by the request's TimeoutMillis; a
// zero or negative timeout leaves the bound to the controller. Shutdown
// cancels it.
func (b *Broker) adminContext(timeoutMillis int32) (context.Context, context.CancelFunc) {
	parent := b.tasks.Context()
	if timeoutMillis <= 0 {
		return context.WithCancel(parent)
	}
	return context.WithTimeout(parent, time.Duration(timeoutMillis)*time.Millisecond)
}

// catchUpMetadata applies the controller's current image, so the effect
// of a change just committed is visible to the next request of any client
// once the response to this one is sent. A failure to apply (a log that
// cannot be opened) is logged by applyImage; the change itself is
// committed, so the response still reports success, as Kafka's controller
// would.
func (b *Broker) catchUpMetadata() {
	b.applyImage(b.ctrl.Image())
}
