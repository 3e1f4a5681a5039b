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
// Not here: ACLs, throttling of partition mutations (KIP-599; throttle is
// 0).

import (
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteTopics, min: 0, max: 6, handle: typed(handleDeleteTopics), forward: true})
}

func handleDeleteTopics(b *Broker, c *conn, req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
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
	return resp, nil
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
