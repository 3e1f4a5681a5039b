package group

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type clientKey struct{}

type clientInfo struct{ id, host string }

// WithClient returns a context that carries the client ID and the address
// ("/127.0.0.1", as Kafka shows it) of the connection a request came on.
// ConsumerGroupHeartbeat keeps them as the member's ClientId and
// ClientHost, which ConsumerGroupDescribe shows; without them both are "".
func WithClient(ctx context.Context, clientID, clientHost string) context.Context {
	return context.WithValue(ctx, clientKey{}, clientInfo{id: clientID, host: clientHost})
}

// ConsumerGroupHeartbeat handles ConsumerGroupHeartbeat v0-v1 (KIP-848),
// the consumer protocol's one request: a member joins with epoch 0, then
// heartbeats every HeartbeatIntervalMillis with its member epoch and the
// partitions it owns, and learns its epoch and assignment from the answers;
// it leaves with epoch -1 (-2: a static member that will be back). It never
// blocks.
//
//   - v0: the coordinator makes the member ID of a member joining without
//     one.
//   - v1 (KIP-1082): the member makes its own ID, required in every
//     request; SubscribedTopicRegex, matched in full against the topic
//     names Deps.TopicNames lists (INVALID_REGULAR_EXPRESSION when the
//     expression does not compile, or when Deps.TopicNames is nil).
//
// A malformed request answers INVALID_REQUEST, as Kafka's validation does:
// no group ID; v1 without a member ID; a join without RebalanceTimeoutMillis,
// without subscription, or with owned partitions; an empty instance or rack
// ID; an epoch below -2. An assignor that group.consumer.assignors does not
// enable answers UNSUPPORTED_ASSIGNOR. The group is created by a join, and
// an empty classic group (offsets only, or no members) becomes a consumer
// group; a classic group with members answers GROUP_ID_NOT_FOUND (online
// migration between the protocols is not done). See docs/DESIGN-group.md
// for the member rules.
func (c *Coordinator) ConsumerGroupHeartbeat(ctx context.Context, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	r, res := c.newCGRequest(ctx, req)
	if res == nil {
		res = c.consumerHeartbeat(r)
	}
	resp.ErrorCode = res.code
	if res.code != 0 {
		if res.message != "" {
			resp.ErrorMessage = new(res.message)
		}
		return resp
	}
	resp.MemberID = new(res.memberID)
	resp.MemberEpoch = res.epoch
	resp.HeartbeatIntervalMillis = int32(res.interval.Milliseconds())
	if res.withAssignment {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, t := range res.assignment.topics() {
			at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			at.TopicID, at.Partitions = t, slices.Clone(res.assignment[t])
			a.Topics = append(a.Topics, at)
		}
		if a.Topics == nil {
			a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
		}
		resp.Assignment = &a
	}
	return resp
}

// newCGRequest validates a heartbeat and copies what the state machine
// keeps out of it (a decoded request aliases the connection's buffer).
func (c *Coordinator) newCGRequest(ctx context.Context, req *kmsg.ConsumerGroupHeartbeatRequest) (*cgRequest, *cgResult) {
	if res := c.checkCGRequest(req); res != nil {
		return nil, res
	}
	r := &cgRequest{
		version:          req.Version,
		group:            strings.Clone(req.Group),
		memberID:         strings.Clone(req.MemberID),
		epoch:            req.MemberEpoch,
		instanceID:       cloneString(req.InstanceID),
		rackID:           cloneString(req.RackID),
		rebalanceTimeout: req.RebalanceTimeoutMillis,
		regex:            cloneString(req.SubscribedTopicRegex),
		assignor:         cloneString(req.ServerAssignor),
	}
	if info, ok := ctx.Value(clientKey{}).(clientInfo); ok {
		r.clientID, r.clientHost = strings.Clone(info.id), strings.Clone(info.host)
	}
	if req.SubscribedTopicNames != nil {
		r.topics = make([]string, 0, len(req.SubscribedTopicNames))
		for _, t := range req.SubscribedTopicNames {
			r.topics = append(r.topics, strings.Clone(t))
		}
		slices.Sort(r.topics)
		r.topics = slices.Compact(r.topics)
	}
	if req.Topics != nil {
		owned := make(map[[16]byte][]int32, len(req.Topics))
		for _, t := range req.Topics {
			owned[t.TopicID] = append(owned[t.TopicID], t.Partitions...)
		}
		r.owned = newTopicPartitions(owned)
	}
	return r, nil
}

// checkCGRequest is Kafka's validation of a heartbeat, before any group is
// looked at.
func (c *Coordinator) checkCGRequest(req *kmsg.ConsumerGroupHeartbeatRequest) *cgResult {
	invalid := func(msg string) *cgResult { return cgError(codeInvalidRequest, "%s", msg) }
	switch {
	case req.Group == "":
		return invalid("GroupId can't be empty.")
	case req.Version >= 1 && req.MemberID == "":
		return invalid("MemberId can't be empty.")
	case req.InstanceID != nil && *req.InstanceID == "":
		return invalid("InstanceId can't be empty.")
	case req.RackID != nil && *req.RackID == "":
		return invalid("RackId can't be empty.")
	}
	switch e := req.MemberEpoch; {
	case e > 0 || e == leaveEpoch:
		if req.MemberID == "" {
			return invalid("MemberId can't be empty.")
		}
	case e == joinEpoch:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case req.Topics == nil || len(req.Topics) > 0:
			return invalid("TopicPartitions must be empty when (re-)joining.")
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
	case e == staticLeaveEpoch:
		switch {
		case req.MemberID == "":
			return invalid("MemberId can't be empty.")
		case req.InstanceID == nil:
			return invalid("InstanceId can't be null.")
		}
	default:
		return invalid("MemberEpoch is invalid.")
	}
	if req.RebalanceTimeoutMillis < -1 {
		return invalid("RebalanceTimeoutMs is invalid.")
	}
	if re := req.SubscribedTopicRegex; re != nil && *re != "" {
		if c.deps.TopicNames == nil {
			return cgError(codeInvalidRegularExpression, "topic regular expressions are not supported by this broker")
		}
		if _, err := compileTopicRegex(*re); err != nil {
			return cgError(codeInvalidRegularExpression, "SubscribedTopicRegex `%s` is not a valid regular expression: %v", *re, err)
		}
	}
	if a := req.ServerAssignor; a != nil && !slices.Contains(c.cfg.ConsumerAssignors, *a) {
		return cgError(codeUnsupportedAssignor, "ServerAssignor %s is not supported. Supported assignors: %s.",
			*a, strings.Join(c.cfg.ConsumerAssignors, ", "))
	}
	return nil
}

// consumerHeartbeat runs a validated heartbeat's turn.
func (c *Coordinator) consumerHeartbeat(r *cgRequest) *cgResult {
	g, code := c.lockGroup(r.group, r.epoch == joinEpoch)
	if g == nil {
		if code == 0 {
			return cgError(codeGroupIDNotFound, "consumer group %s not found", r.group)
		}
		return &cgResult{code: code}
	}
	s := c.newStep(g)
	var res *cgResult
	var records []kv
	if g.kind == protocolShare || g.kind == protocolStreams {
		res = cgError(codeGroupIDNotFound, "group %s is not a consumer group", r.group)
	} else if g.kind == protocolClassic {
		if r.epoch != joinEpoch || !g.classic.convertible() {
			res = cgError(codeGroupIDNotFound, "group %s is not a consumer group", r.group)
		} else {
			records = g.convertToConsumer(s)
		}
	}
	if res == nil {
		res = g.consumer.heartbeat(s, r, records)
	}
	if res.code != 0 {
		s.rollback()
	}
	c.finishTurn(g, s)
	return res
}

// ConsumerGroupDescribe handles ConsumerGroupDescribe v0-v1 (KIP-848): each
// consumer group's state, epochs, assignor and members with their
// subscriptions, current and target assignments (topics by ID and name).
// A group that does not exist, or is a classic group, answers
// GROUP_ID_NOT_FOUND, as in Kafka. v1 adds the member type, 1 (consumer
// protocol) for every member. AuthorizedOperations is left for the broker
// to fill in.
func (c *Coordinator) ConsumerGroupDescribe(ctx context.Context, req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group = id
		c.describeConsumer(req.Version, &dg)
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) describeConsumer(version int16, dg *kmsg.ConsumerGroupDescribeResponseGroup) {
	if dg.Group == "" {
		dg.ErrorCode = codeInvalidGroupID
		return
	}
	g, code := c.lockGroup(dg.Group, false)
	switch {
	case g == nil && code != 0:
		dg.ErrorCode = code
		return
	case g == nil:
		dg.ErrorCode, dg.ErrorMessage = codeGroupIDNotFound, new("group "+dg.Group+" not found")
		return
	}
	defer g.mu.Unlock()
	if g.kind != protocolConsumer {
		dg.ErrorCode, dg.ErrorMessage = codeGroupIDNotFound, new("group "+dg.Group+" is not a consumer group")
		return
	}
	s := c.newStep(g)
	cg := &g.consumer
	dg.State = cg.stateName()
	dg.Epoch = cg.epoch
	dg.AssignmentEpoch = cg.assignmentEpoch
	dg.AssignorName = cg.preferredAssignor(&c.cfg)
	for _, m := range cg.sortedMembers() {
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID = m.id
		if m.instanceID != "" {
			dm.InstanceID = new(m.instanceID)
		}
		if m.rackID != "" {
			dm.RackID = new(m.rackID)
		}
		dm.MemberEpoch = m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopics = slices.Clone(m.subscribedTopics)
		if dm.SubscribedTopics == nil {
			dm.SubscribedTopics = []string{}
		}
		if m.regex != "" {
			dm.SubscribedTopicRegex = new(m.regex)
		}
		dm.Assignment = describeAssignment(s, m.assigned)
		dm.TargetAssignment = describeAssignment(s, cg.target[m.id])
		if version >= 1 {
			dm.MemberType = 1
		}
		dg.Members = append(dg.Members, dm)
	}
}

// describeAssignment lists partitions with their topics' names; topics
// that no longer exist are left out, as Kafka does.
func describeAssignment(s *step, tps topicPartitions) kmsg.Assignment {
	a := kmsg.NewAssignment()
	a.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for _, t := range tps.topics() {
		if s.topics.name == nil {
			break
		}
		name, ok := s.topics.name(t)
		if !ok {
			continue
		}
		a.TopicPartitions = append(a.TopicPartitions, kmsg.AssignmentTopicPartition{
			TopicID: t, Topic: name, Partitions: slices.Clone(tps[t]),
		})
	}
	return a
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	return new(strings.Clone(*s))
}
