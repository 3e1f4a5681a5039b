package group

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// NewTopic is an internal topic a streams group needs (a repartition or
// changelog topic of its topology), for Deps.CreateTopics.
type NewTopic struct {
	Name       string
	Partitions int32
	// ReplicationFactor is -1 for the broker's default.
	ReplicationFactor int16
	Configs           map[string]string
}

// StreamsConfig holds the streams groups' (KIP-1071) settings.
type StreamsConfig struct {
	// SessionTimeout: group.streams.session.timeout.ms (45s).
	SessionTimeout time.Duration
	// HeartbeatInterval: group.streams.heartbeat.interval.ms (5s).
	HeartbeatInterval time.Duration
	// NumStandbyReplicas is the standby replicas of each task, unless the
	// group sets streams.num.standby.replicas.
	// group.streams.num.standby.replicas (0).
	NumStandbyReplicas int
	// MaxSize: group.streams.max.size (MaxInt32).
	MaxSize int
	// MaxWarmupReplicas bounds the warm-up tasks of a group at a time:
	// Kafka Streams' max.warmup.replicas default, 2.
	MaxWarmupReplicas int
	// TaskOffsetInterval is how often members report their tasks'
	// changelog offsets: Kafka's group.streams.task.offset.interval.ms
	// default, 60s.
	TaskOffsetInterval time.Duration
}

func defaultStreamsConfig() StreamsConfig {
	return StreamsConfig{
		SessionTimeout:     45 * time.Second,
		HeartbeatInterval:  5 * time.Second,
		MaxSize:            math.MaxInt32,
		MaxWarmupReplicas:  2,
		TaskOffsetInterval: time.Minute,
	}
}

func streamsConfigFrom(v config.Values) StreamsConfig {
	c := defaultStreamsConfig()
	c.SessionTimeout = time.Duration(v.Int("group.streams.session.timeout.ms")) * time.Millisecond
	c.HeartbeatInterval = time.Duration(v.Int("group.streams.heartbeat.interval.ms")) * time.Millisecond
	c.NumStandbyReplicas = int(v.Int("group.streams.num.standby.replicas"))
	c.MaxSize = int(v.Int("group.streams.max.size"))
	return c
}

func (c *StreamsConfig) fill() {
	d := defaultStreamsConfig()
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = d.SessionTimeout
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = d.HeartbeatInterval
	}
	if c.NumStandbyReplicas < 0 {
		c.NumStandbyReplicas = 0
	}
	if c.MaxSize <= 0 {
		c.MaxSize = d.MaxSize
	}
	if c.MaxWarmupReplicas <= 0 {
		c.MaxWarmupReplicas = d.MaxWarmupReplicas
	}
	if c.TaskOffsetInterval <= 0 {
		c.TaskOffsetInterval = d.TaskOffsetInterval
	}
}

// streamsCreating is the internal topics being created, so that the
// heartbeats that find them missing meanwhile do not ask again.
type streamsCreating struct {
	mu       sync.Mutex
	inFlight map[string]bool
	// failed holds why the last attempt to create a topic failed, for the
	// heartbeats' MISSING_INTERNAL_TOPICS status, until one succeeds.
	failed map[string]string
}

// StreamsGroupHeartbeat handles StreamsGroupHeartbeat v0-v1 (KIP-1071), the
// streams protocol's one request: a Kafka Streams member joins with epoch
// 0 and its topology, heartbeats with its epoch and the tasks it owns, and
// leaves with -1 (-2: a static member that will be back). The coordinator
// derives the tasks and internal topics from the topology, creates the
// missing internal topics (Deps.CreateTopics, in the background; until
// they exist the answer says MISSING_INTERNAL_TOPICS), assigns active,
// standby and warm-up tasks, and hands each member its tasks once their
// previous owner revoked them. It never blocks.
//
// v1 adds AcceptableRecoveryLag (answered) and TopologyDescriptionRequired
// (always false: topology descriptions, KIP-1331, are not stored).
func (c *Coordinator) StreamsGroupHeartbeat(ctx context.Context, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
	r, res := c.newSGRequest(ctx, req)
	if res == nil {
		res = c.streamsHeartbeat(r)
	}
	resp.ErrorCode = res.code
	if res.code != 0 {
		if res.message != "" {
			resp.ErrorMessage = new(res.message)
		}
		return resp
	}
	c.createAllowed(ctx, res)
	resp.MemberID = res.memberID
	resp.MemberEpoch = res.epoch
	resp.HeartbeatIntervalMillis = int32(res.interval.Milliseconds())
	resp.AcceptableRecoveryLagLegacy = acceptableRecoveryLag
	resp.AcceptableRecoveryLag = acceptableRecoveryLag
	resp.TaskOffsetIntervalMillis = int32(c.cfg.Streams.TaskOffsetInterval.Milliseconds())
	for _, st := range res.statuses {
		ks := kmsg.NewStreamsGroupHeartbeatResponseStatus()
		ks.StatusCode, ks.StatusDetail = st.code, st.detail
		resp.Status = append(resp.Status, ks)
	}
	if res.withAssignment {
		resp.ActiveTasks = wireTasks(res.assignment.active)
		resp.StandbyTasks = wireTasks(res.assignment.standby)
		resp.WarmupTasks = wireTasks(res.assignment.warmup)
	}
	resp.EndpointInformationEpoch = res.endpointEpoch
	if res.withEndpoints {
		resp.PartitionsByUserEndpoint = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpoint{}
		for _, e := range res.endpoints {
			pe := kmsg.NewStreamsGroupHeartbeatResponsePartitionsByUserEndpoint()
			pe.UserEndpoint.Host, pe.UserEndpoint.Port = e.endpoint.host, e.endpoint.port
			pe.ActivePartitions = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{}
			for _, topic := range sortedKeys(e.active) {
				pe.ActivePartitions = append(pe.ActivePartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointActivePartition{Topic: topic, Partitions: e.active[topic]})
			}
			pe.StandbyPartitions = []kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{}
			for _, topic := range sortedKeys(e.standby) {
				pe.StandbyPartitions = append(pe.StandbyPartitions, kmsg.StreamsGroupHeartbeatResponsePartitionsByUserEndpointStandbyPartition{Topic: topic, Partitions: e.standby[topic]})
			}
			resp.PartitionsByUserEndpoint = append(resp.PartitionsByUserEndpoint, pe)
		}
	}
	return resp
}

func wireTasks(ts taskSet) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	for _, id := range sortedKeys(ts) {
		out = append(out, kmsg.TaskIDs{SubtopologyID: id, Partitions: slices.Clone(ts[id])})
	}
	return out
}

// createAllowed creates the internal topics the heartbeat found missing
// that its client may create; the others are named in the answer's
// MISSING_INTERNAL_TOPICS status.
func (c *Coordinator) createAllowed(ctx context.Context, res *sgResult) {
	allow, _ := ctx.Value(createKey{}).(func(string) bool)
	var ok []NewTopic
	var denied []string
	for _, t := range res.create {
		if allow == nil || allow(t.Name) {
			ok = append(ok, t)
		} else {
			denied = append(denied, t.Name)
		}
	}
	if len(denied) > 0 {
		res.statuses = append(res.statuses, streamsStatus{streamsStatusMissingInternalTopics,
			"Unauthorized to CREATE on topics " + strings.Join(denied, ", ") + "."})
	}
	c.creating.mu.Lock()
	var failures []string
	for _, t := range ok {
		if why, failed := c.creating.failed[t.Name]; failed {
			failures = append(failures, why)
		}
	}
	c.creating.mu.Unlock()
	if len(failures) > 0 {
		res.statuses = append(res.statuses, streamsStatus{streamsStatusMissingInternalTopics,
			"Creating internal topics failed: " + strings.Join(failures, "; ") + "."})
	}
	c.createInternalTopics(ok)
}

// createInternalTopics starts creating the internal topics a heartbeat
// found missing, once each while it is under way: the heartbeat does not
// wait (its answer says MISSING_INTERNAL_TOPICS), and a later heartbeat
// finds them.
func (c *Coordinator) createInternalTopics(topics []NewTopic) {
	if len(topics) == 0 || c.deps.CreateTopics == nil {
		return
	}
	c.creating.mu.Lock()
	var todo []NewTopic
	for _, t := range topics {
		if !c.creating.inFlight[t.Name] {
			if c.creating.inFlight == nil {
				c.creating.inFlight = make(map[string]bool)
			}
			c.creating.inFlight[t.Name] = true
			todo = append(todo, t)
		}
	}
	c.creating.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	c.tasks.Go(func(ctx context.Context) {
		defer func() {
			c.creating.mu.Lock()
			for _, t := range todo {
				delete(c.creating.inFlight, t.Name)
			}
			c.creating.mu.Unlock()
		}()
		names := make([]string, len(todo))
		for i, t := range todo {
			names[i] = t.Name
		}
		err := c.deps.CreateTopics(ctx, todo)
		c.creating.mu.Lock()
		for _, name := range names {
			if err != nil {
				if c.creating.failed == nil {
					c.creating.failed = make(map[string]string)
				}
				c.creating.failed[name] = fmt.Sprintf("%s: %v", name, err)
			} else {
				delete(c.creating.failed, name)
			}
		}
		c.creating.mu.Unlock()
		if err != nil {
			c.log.Warn("creating streams internal topics failed", "topics", names, "err", err)
			return
		}
		c.log.Info("created streams internal topics", "topics", names)
	})
}

// newSGRequest validates a heartbeat (Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid)
// and copies what the state machine keeps.
func (c *Coordinator) newSGRequest(ctx context.Context, req *kmsg.StreamsGroupHeartbeatRequest) (*sgRequest, *sgResult) {
	invalid := func(msg string) (*sgRequest, *sgResult) { return nil, sgError(codeInvalidRequest, "%s", msg) }
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	nonEmpty := func(ts []kmsg.TaskIDs) bool { return ts == nil || len(ts) > 0 } // null is refused too, as in Kafka
	switch {
	case blank(req.MemberID):
		return invalid("MemberId can't be empty.")
	case blank(req.Group):
		return invalid("GroupId can't be empty.")
	case req.InstanceID != nil && blank(*req.InstanceID):
		return invalid("InstanceId can't be empty.")
	case req.RackID != nil && blank(*req.RackID):
		return invalid("RackId can't be empty.")
	case req.RebalanceTimeoutMillis < -1:
		return invalid("RebalanceTimeoutMs is invalid.")
	}
	switch e := req.MemberEpoch; {
	case e == joinEpoch:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case nonEmpty(req.ActiveTasks):
			return invalid("ActiveTasks must be empty when (re-)joining.")
		case nonEmpty(req.StandbyTasks):
			return invalid("StandbyTasks must be empty when (re-)joining.")
		case nonEmpty(req.WarmupTasks):
			return invalid("WarmupTasks must be empty when (re-)joining.")
		case req.Topology == nil:
			return invalid("Topology must be non-null when (re-)joining.")
		case req.ProcessID == nil || *req.ProcessID == "":
			return invalid("ProcessId can't be empty.")
		}
	case e == staticLeaveEpoch && req.InstanceID == nil:
		return invalid("InstanceId can't be null.")
	case e < staticLeaveEpoch:
		return invalid(fmt.Sprintf("MemberEpoch is %d, but must be greater than or equal to -2.", e))
	}
	r := &sgRequest{
		group:            strings.Clone(req.Group),
		memberID:         strings.Clone(req.MemberID),
		epoch:            req.MemberEpoch,
		endpointEpoch:    req.EndpointInformationEpoch,
		instanceID:       cloneString(req.InstanceID),
		rackID:           cloneString(req.RackID),
		rebalanceTimeout: req.RebalanceTimeoutMillis,
		processID:        cloneString(req.ProcessID),
		shutdown:         req.ShutdownApplication,
		settings:         c.streamsSettings(req.Group),
	}
	if req.MemberEpoch == joinEpoch {
		t, err := topologyFromRequest(req.Topology)
		if err != nil {
			return nil, sgError(kerr.StreamsInvalidTopology.Code, "%s", err.Error())
		}
		r.topology = t
	}
	if info, ok := ctx.Value(clientKey{}).(clientInfo); ok {
		r.clientID, r.clientHost = strings.Clone(info.id), strings.Clone(info.host)
	}
	if req.ActiveTasks != nil || req.StandbyTasks != nil || req.WarmupTasks != nil {
		r.owned = &streamsTasks{active: tasksFromWire(req.ActiveTasks), standby: tasksFromWire(req.StandbyTasks), warmup: tasksFromWire(req.WarmupTasks)}
	}
	if e := req.UserEndpoint; e != nil {
		r.endpoint = &streamsEndpoint{host: strings.Clone(e.Host), port: e.Port}
	}
	if req.ClientTags != nil {
		r.tagsSet = true
		for _, t := range req.ClientTags {
			r.clientTags = append(r.clientTags, [2]string{strings.Clone(t.Key), strings.Clone(t.Value)})
		}
		slices.SortFunc(r.clientTags, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	}
	r.taskOffsets, r.taskEndOffsets = taskOffsetsFromWire(req.TaskOffsets), taskOffsetsFromWire(req.TaskEndOffsets)
	return r, nil
}

func tasksFromWire(in []kmsg.TaskIDs) taskSet {
	var tasks []taskID
	for _, t := range in {
		for _, p := range t.Partitions {
			tasks = append(tasks, taskID{strings.Clone(t.SubtopologyID), p})
		}
	}
	return taskSetOf(tasks)
}

func taskOffsetsFromWire(in []kmsg.TaskOffset) map[taskID]int64 {
	if in == nil {
		return nil
	}
	out := make(map[taskID]int64, len(in))
	for _, o := range in {
		out[taskID{strings.Clone(o.SubtopologyID), o.Partition}] = o.Offset
	}
	return out
}

// streamsSettings are the group's settings: the broker's, overridden by
// the group's streams.session.timeout.ms, streams.heartbeat.interval.ms
// and streams.num.standby.replicas (Deps.GroupConfigs).
func (c *Coordinator) streamsSettings(groupID string) streamsSettings {
	st := streamsSettings{
		sessionTimeout:    c.cfg.Streams.SessionTimeout,
		heartbeatInterval: c.cfg.Streams.HeartbeatInterval,
		standbys:          c.cfg.Streams.NumStandbyReplicas,
	}
	if c.deps.GroupConfigs == nil {
		return st
	}
	overrides := c.deps.GroupConfigs(groupID)
	nonNegative := func(name string) (int, bool) {
		n, err := strconv.Atoi(overrides[name])
		return n, err == nil && n >= 0
	}
	if n, ok := nonNegative("streams.session.timeout.ms"); ok && n > 0 {
		st.sessionTimeout = time.Duration(n) * time.Millisecond
	}
	if n, ok := nonNegative("streams.heartbeat.interval.ms"); ok && n > 0 {
		st.heartbeatInterval = time.Duration(n) * time.Millisecond
	}
	if n, ok := nonNegative("streams.num.standby.replicas"); ok {
		st.standbys = n
	}
	return st
}

// streamsHeartbeat runs a validated heartbeat's turn.
func (c *Coordinator) streamsHeartbeat(r *sgRequest) *sgResult {
	g, code := c.lockGroup(r.group, r.epoch == joinEpoch)
	if g == nil {
		if code == 0 {
			return sgError(codeGroupIDNotFound, "streams group %s not found", r.group)
		}
		return &sgResult{code: code}
	}
	s := c.newStep(g)
	var res *sgResult
	var records []kv
	switch {
	case g.kind == protocolStreams:
	case g.kind == protocolClassic && r.epoch == joinEpoch && g.classic.convertible():
		records = g.convertToStreams(s)
	default:
		res = sgError(codeGroupIDNotFound, "group %s is not a streams group", r.group)
	}
	if res == nil && r.epoch != joinEpoch && g.streams.topology == nil {
		res = sgError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
	}
	if res == nil {
		res = g.streams.heartbeat(s, r, records)
	}
	if res.code != 0 {
		s.rollback()
	}
	c.finishTurn(g, s)
	return res
}

// StreamsGroupDescribe handles StreamsGroupDescribe v0-v1 (KIP-1071): each
// streams group's state, epochs, topology (with the partition counts of its
// internal topics once configured) and members with their processes,
// endpoints, task offsets, and current and target tasks; the subtopologies
// only once the topology is ready (its topics there and well partitioned),
// as Kafka does. A group that does not exist or is not a streams group
// answers GROUP_ID_NOT_FOUND. v1's
// topology description (KIP-1331) is not stored: asked for, its status is
// NOT_STORED (1); AssignorName is "sticky". AuthorizedOperations is left
// for the broker to fill in.
func (c *Coordinator) StreamsGroupDescribe(ctx context.Context, req *kmsg.StreamsGroupDescribeRequest) *kmsg.StreamsGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewStreamsGroupDescribeResponseGroup()
		dg.Group = id
		c.describeStreams(req, &dg)
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) describeStreams(req *kmsg.StreamsGroupDescribeRequest, dg *kmsg.StreamsGroupDescribeResponseGroup) {
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
	if g.kind != protocolStreams {
		dg.ErrorCode, dg.ErrorMessage = codeGroupIDNotFound, new("group "+dg.Group+" is not a streams group")
		return
	}
	sg := &g.streams
	if sg.topology != nil {
		// Against the topics as they are now: a group loaded from the log
		// has not configured its topology yet.
		sg.configured = sg.configure(c.newStep(g))
	}
	dg.State = sg.stateName()
	dg.Epoch, dg.AssignmentEpoch = sg.epoch, sg.assignmentEpoch
	if req.Version >= 1 {
		dg.AssignorName = new("sticky")
		if req.IncludeTopologyDescription {
			dg.TopologyDescriptionStatus = 1
		}
	}
	if t := sg.topology; t != nil {
		dt := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
		dt.Epoch = t.epoch
		ct := sg.configured
		for _, st := range t.subtopologies {
			if !ct.ready() {
				break // Kafka describes the subtopologies of a ready topology only
			}
			ds := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
			ds.SubtopologyID = st.id
			ds.SourceTopics = slices.Clone(st.sourceTopics)
			if ct != nil && ct.sources[st.id] != nil {
				ds.SourceTopics = slices.Clone(ct.sources[st.id])
			}
			if ds.SourceTopics == nil {
				ds.SourceTopics = []string{}
			}
			ds.RepartitionSinkTopics = append([]string{}, st.repartitionSinks...)
			ds.StateChangelogTopics = describeTopicInfos(st.changelogs, ct)
			ds.RepartitionSourceTopics = describeTopicInfos(st.repartitionSources, ct)
			dt.Subtopologies = append(dt.Subtopologies, ds)
		}
		dg.Topology = &dt
	}
	for _, m := range sg.sortedMembers() {
		dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch = m.id, m.epoch
		dm.InstanceID, dm.RackID = nullable(m.instanceID), nullable(m.rackID)
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.TopologyEpoch, dm.ProcessID = m.topologyEpoch, m.processID
		if m.endpoint != nil {
			dm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.endpoint.host, Port: m.endpoint.port}
		}
		dm.ClientTags = []kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{}
		for _, t := range m.clientTags {
			dm.ClientTags = append(dm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: t[0], Value: t[1]})
		}
		dm.TaskOffsets, dm.TaskEndOffsets = describeTaskOffsets(m.taskOffsets), describeTaskOffsets(m.taskEndOffsets)
		dm.Assignment = describeStreamsTasks(m.assigned)
		dm.TargetAssignment = describeStreamsTasks(sg.target[m.id])
		dg.Members = append(dg.Members, dm)
	}
	if dg.Members == nil {
		dg.Members = []kmsg.StreamsGroupDescribeResponseGroupMember{}
	}
}

func describeTopicInfos(infos []streamsTopicInfo, ct *configuredTopology) []kmsg.TopicInfo {
	out := []kmsg.TopicInfo{}
	for _, ti := range infos {
		kt := kmsg.NewTopicInfo()
		kt.Topic, kt.NumPartitions, kt.ReplicationFactor = ti.name, ti.partitions, ti.replication
		if ct != nil && ct.partitions[ti.name] > 0 {
			kt.NumPartitions = ct.partitions[ti.name]
		}
		for _, c := range ti.configs {
			kt.Configs = append(kt.Configs, kmsg.TopicInfoConfig{Key: c[0], Value: c[1]})
		}
		out = append(out, kt)
	}
	return out
}

func describeTaskOffsets(m map[taskID]int64) []kmsg.TaskOffset {
	out := []kmsg.TaskOffset{}
	tasks := make([]taskID, 0, len(m))
	for t := range m {
		tasks = append(tasks, t)
	}
	slices.SortFunc(tasks, compareTasks)
	for _, t := range tasks {
		out = append(out, kmsg.TaskOffset{SubtopologyID: t.subtopology, Partition: t.partition, Offset: m[t]})
	}
	return out
}

func describeStreamsTasks(t streamsTasks) kmsg.StreamsAssignment {
	a := kmsg.NewStreamsAssignment()
	a.ActiveTasks, a.StandbyTasks, a.WarmupTasks = wireTasks(t.active), wireTasks(t.standby), wireTasks(t.warmup)
	return a
}

type createKey struct{}

// WithTopicCreation returns a context that says which internal topics the
// client of a StreamsGroupHeartbeat may have created (the broker's
// authorization: CREATE on the cluster or the topic). Without it every
// topic may be.
func WithTopicCreation(ctx context.Context, allow func(topic string) bool) context.Context {
	return context.WithValue(ctx, createKey{}, allow)
}
