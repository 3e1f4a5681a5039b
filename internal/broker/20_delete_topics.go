package broker

// DeleteTopics (key 20), versions 0-6.
//
// Topics are named by TopicNames up to v5 and, from v6 (KIP-516), by
// Topics, each with a name or a topic ID. The controller removes every
// topic it finds in one committed metadata batch; the broker then applies
// the image before it answers, which deletes the topics' partition logs,
// so once the client has the response the name is free and a topic
// created under it starts from an empty log with a new ID.
//
// Errors per topic: UNKNOWN_TOPIC_OR_PARTITION for an unknown name,
// UNKNOWN_TOPIC_ID for an unknown ID, INVALID_REQUEST for a topic given
// twice, named both ways at once, or named neither way,
// TOPIC_DELETION_DISABLED when delete.topic.enable is false,
// REQUEST_TIMED_OUT when TimeoutMillis runs out before the commit (a zero
// or negative timeout leaves the bound to the controller). ErrorMessage is
// returned from v5. From v6 every answer carries the topic ID, and the name
// is null when the topic was asked for by an unknown ID. Kafka's internal
// topics (__consumer_offsets, __transaction_state) cannot be deleted:
// INVALID_REQUEST with the reason (the controller refuses it).
//
// Authorization (authz.go), as Kafka's ControllerApis.deleteTopics: DELETE
// on the cluster allows every topic; without it a topic named by name
// needs DESCRIBE and DELETE on it, one named by ID (and known) DELETE, else
// TOPIC_AUTHORIZATION_FAILED, with the name only if the principal may
// DESCRIBE the topic and no ID when it was named by name. An unknown ID
// is UNKNOWN_TOPIC_ID before any check. The checks run on the broker the
// client reached, before it forwards what they allowed.
//
// Not here: throttling of partition mutations (KIP-599; throttle is 0).

import (
	"slices"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteTopics, min: 0, max: 6, handle: typed(handleDeleteTopics)})
}

func handleDeleteTopics(b *Broker, c *conn, req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	asked := deleteTopicsAsked(req)
	allowed, denied := b.authorizeDeleteTopics(c, req, asked)
	// The controller mutation quota (KIP-599) on what may be deleted.
	allowedAsked := deleteTopicsAsked(allowed)
	admitted, throttled := allowed, []bool(nil)
	if kept, refused := admitMutations(b, c, req.Version >= 5, allowedAsked, b.partitionsOf); refused != nil {
		cp := *allowed
		cp.TopicNames, cp.Topics = nil, nil
		for _, t := range kept {
			if req.Version < 6 {
				cp.TopicNames = append(cp.TopicNames, *t.Name)
			} else {
				cp.Topics = append(cp.Topics, kmsg.DeleteTopicsRequestTopic{Topic: t.Name, TopicID: t.TopicID})
			}
		}
		admitted, throttled = &cp, refused
	}
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	if (denied == nil || slices.Contains(denied, nil)) && (throttled == nil || slices.Contains(throttled, false)) {
		r, err := b.forwardOr(c, admitted, func() kmsg.Response { return b.deleteTopicsHere(admitted) })
		if err != nil {
			return nil, err
		}
		resp = r.(*kmsg.DeleteTopicsResponse)
	}
	if throttled != nil {
		resp.Topics = mergeDenied(len(allowedAsked), func(i int) (kmsg.DeleteTopicsResponseTopic, bool) {
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.TopicID, st.ErrorCode = allowedAsked[i].Name, allowedAsked[i].TopicID, kerr.ThrottlingQuotaExceeded.Code
			st.ErrorMessage = kmsg.StringPtr(kerr.ThrottlingQuotaExceeded.Description)
			return st, throttled[i]
		}, resp.Topics)
	}
	if denied != nil {
		resp.Topics = mergeDenied(len(asked), func(i int) (kmsg.DeleteTopicsResponseTopic, bool) {
			if denied[i] == nil {
				return kmsg.DeleteTopicsResponseTopic{}, false
			}
			return *denied[i], true
		}, resp.Topics)
	}
	return resp, nil
}

// authorizeDeleteTopics splits the request into what the principal may
// delete and, per topic asked, the answer of one it may not (nil: none).
func (b *Broker) authorizeDeleteTopics(c *conn, req *kmsg.DeleteTopicsRequest, asked []deleteTopicAsked) (*kmsg.DeleteTopicsRequest, []*kmsg.DeleteTopicsResponseTopic) {
	if b.permitsCluster(c, kmsg.ACLOperationDelete) {
		return req, nil
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	del := b.authorizeEach(c, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic)
	var denied []*kmsg.DeleteTopicsResponseTopic
	for i, t := range asked {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.ErrorCode = kerr.TopicAuthorizationFailed.Code
		switch {
		case t.Name != nil:
			if describe(*t.Name) && del(*t.Name) {
				continue
			}
			st.Topic = t.Name
		case t.TopicID != (model.TopicID{}):
			ti, known := img.TopicByID(t.TopicID)
			if !known || del(ti.Name) {
				continue
			}
			st.TopicID = t.TopicID
			if describe(ti.Name) {
				st.Topic = kmsg.StringPtr(ti.Name)
			}
		default:
			continue
		}
		if denied == nil {
			denied = make([]*kmsg.DeleteTopicsResponseTopic, len(asked))
		}
		denied[i] = &st
	}
	if denied == nil {
		return req, nil
	}
	allowed := *req
	allowed.TopicNames, allowed.Topics = nil, nil
	for i, t := range asked {
		switch {
		case denied[i] != nil:
		case req.Version < 6:
			allowed.TopicNames = append(allowed.TopicNames, *t.Name)
		default:
			allowed.Topics = append(allowed.Topics, req.Topics[i])
		}
	}
	return &allowed, denied
}

// deleteTopicsHere deletes the request's topics through this node's
// controller.
func (b *Broker) deleteTopicsHere(req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	asked := deleteTopicsAsked(req)
	var want []controller.DeleteTopic
	for _, t := range asked {
		if t.Name == nil && t.TopicID == (model.TopicID{}) {
			continue
		}
		want = append(want, controller.DeleteTopic{Name: deref(t.Name), TopicID: t.TopicID})
	}
	var results []controller.DeleteTopicResult
	if len(want) > 0 {
		ctx, cancel := b.adminContext(req.TimeoutMillis)
		defer cancel()
		results = b.ctrl.DeleteTopics(ctx, want)
		b.catchUpMetadata()
	}
	for _, t := range asked {
		st := kmsg.NewDeleteTopicsResponseTopic()
		if t.Name == nil && t.TopicID == (model.TopicID{}) {
			st.ErrorCode = kerr.InvalidRequest.Code
			st.ErrorMessage = kmsg.StringPtr("Neither topic name nor id were specified.")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		r := results[0]
		results = results[1:]
		st.TopicID, st.ErrorCode = r.TopicID, r.ErrorCode
		switch {
		case r.Name != "":
			st.Topic = kmsg.StringPtr(r.Name)
		case t.Name != nil:
			st.Topic = t.Name
		}
		if r.ErrorMessage != "" {
			st.ErrorMessage = kmsg.StringPtr(r.ErrorMessage)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// deleteTopicAsked is one topic of the request, however it was named.
type deleteTopicAsked struct {
	Name    *string
	TopicID model.TopicID
}

func deleteTopicsAsked(req *kmsg.DeleteTopicsRequest) []deleteTopicAsked {
	var out []deleteTopicAsked
	if req.Version < 6 {
		for _, name := range req.TopicNames {
			out = append(out, deleteTopicAsked{Name: kmsg.StringPtr(name)})
		}
		return out
	}
	for _, t := range req.Topics {
		out = append(out, deleteTopicAsked{Name: t.Topic, TopicID: t.TopicID})
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
