package controller

import (
	"context"
	"crypto/rand"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// CreateTopic is one topic of a CreateTopics request.
type CreateTopic struct {
	Name string
	// NumPartitions is the partition count; -1 takes num.partitions.
	NumPartitions int32
	// ReplicationFactor is the replica count; -1 takes
	// default.replication.factor.
	ReplicationFactor int16
	// Assignments, when not empty, gives the replicas of every partition
	// 0..n-1 by hand; NumPartitions and ReplicationFactor must then be -1.
	Assignments map[int32][]int32
	// Configs are the topic's overrides; a nil value is refused, as in Kafka.
	Configs map[string]*string
	// Internal is set by the broker when it creates one of Kafka's internal
	// topics (metadata.IsInternalTopic) itself; a client's request for one
	// is refused.
	Internal bool
}

// CreateTopicResult is one topic's outcome, in the order of the request.
type CreateTopicResult struct {
	Name string
	// TopicID is the new topic's ID; zero on error and when only validating.
	TopicID model.TopicID
	// NumPartitions and ReplicationFactor are what the topic got (or would
	// get); -1 on error, as Kafka reports them.
	NumPartitions     int32
	ReplicationFactor int16
	// Configs are the topic's effective configs (CreateTopics v5+ returns
	// them); nil on error.
	Configs      []config.Description
	ErrorCode    int16
	ErrorMessage string
}

// DeleteTopic names a topic to delete by name or, from DeleteTopics v6, by
// ID; exactly one must be set.
type DeleteTopic struct {
	Name    string
	TopicID model.TopicID
}

// DeleteTopicResult is one topic's outcome; Name and TopicID are both filled
// in when the topic was found.
type DeleteTopicResult struct {
	Name         string
	TopicID      model.TopicID
	ErrorCode    int16
	ErrorMessage string
}

// CreatePartitions asks for a topic to grow to Count partitions.
type CreatePartitions struct {
	Topic string
	Count int32
	// Assignments, when set, gives the replicas of each new partition in
	// order; there must be exactly Count minus the current count of them.
	Assignments [][]int32
}

// CreatePartitionsResult is one topic's outcome.
type CreatePartitionsResult struct {
	Topic        string
	ErrorCode    int16
	ErrorMessage string
}

const (
	// maxTopicNameLength is Kafka's limit: a partition directory is the name,
	// '-', the partition number and a suffix, within a 255-byte file name.
	maxTopicNameLength = 249
	// clusterMetadataTopic is the name of KRaft's own log, which clients may
	// not create.
	clusterMetadataTopic = metadata.ClusterMetadataTopic
	// maxPartitionsPerRequest caps the partitions one request may create, as
	// Kafka's controller does, so one request cannot make a huge Raft entry.
	maxPartitionsPerRequest = 10000
)

// CreateTopics creates topics (or, with validateOnly, checks that it could),
// all valid ones in one committed batch. Each topic gets its own result and
// Kafka's error code: INVALID_TOPIC_EXCEPTION for an illegal or colliding
// name, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
// INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG, INVALID_REQUEST for a name
// given twice, and POLICY_VIOLATION for every topic when the request asks
// for more than 10000 partitions in all.
func (c *Controller) CreateTopics(ctx context.Context, topics []CreateTopic, validateOnly bool) []CreateTopicResult {
	results := make([]CreateTopicResult, len(topics))
	for i, t := range topics {
		results[i] = CreateTopicResult{Name: t.Name, NumPartitions: -1, ReplicationFactor: -1}
	}
	failAll := func(f *failure) []CreateTopicResult {
		for i := range results {
			results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message()
		}
		return results
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		return failAll(proposeFailure(err))
	}
	if c.requestedPartitions(topics) > maxPartitionsPerRequest {
		return failAll(fail(kerr.PolicyViolation, "Excessively large number of partitions per request."))
	}
	st := c.newTopicState(c.Image())
	names := map[string]int{}
	for _, t := range topics {
		names[t.Name]++
	}
	var recs []metadata.Record
	var planned []int
	for i, t := range topics {
		if names[t.Name] > 1 {
			results[i].ErrorCode, results[i].ErrorMessage = kerr.InvalidRequest.Code, "Duplicate topic name."
			continue
		}
		res, topicRecs, f := c.planTopic(st, t)
		if f != nil {
			results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message()
			continue
		}
		st.add(t.Name)
		if validateOnly {
			res.TopicID = model.TopicID{}
		}
		results[i] = res
		recs = append(recs, topicRecs...)
		planned = append(planned, i)
	}
	if validateOnly || len(recs) == 0 {
		return results
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		f := proposeFailure(err)
		for _, i := range planned {
			results[i] = CreateTopicResult{Name: results[i].Name, NumPartitions: -1, ReplicationFactor: -1, ErrorCode: f.code(), ErrorMessage: f.message()}
		}
		return results
	}
	for _, i := range planned {
		c.log.Info("topic created", "topic", results[i].Name, "topic_id", metadata.FormatUUID(results[i].TopicID),
			"partitions", results[i].NumPartitions, "replication_factor", results[i].ReplicationFactor)
	}
	return results
}

// requestedPartitions counts partitions the way Kafka's cap does.
func (c *Controller) requestedPartitions(topics []CreateTopic) int64 {
	var total int64
	for _, t := range topics {
		switch {
		case len(t.Assignments) > 0:
			total += int64(len(t.Assignments))
		case t.NumPartitions == -1:
			total += int64(c.static.Int("num.partitions"))
		case t.NumPartitions > 0:
			total += int64(t.NumPartitions)
		}
	}
	return total
}

// topicState is what validating one request's topics needs: the image, the
// broker list, and the names taken so far, including by earlier topics of
// the same request.
type topicState struct {
	img        *metadata.Image
	broker     config.Values
	brokers    []model.NodeID
	racks      map[model.NodeID]string // broker.rack of each live broker
	registered map[model.NodeID]bool
	taken      map[string]bool
	// normalized maps a name with '.' replaced by '_' to the least name
	// taken under it; built on first use.
	normalized map[string]string
	indexed    bool
}

func (c *Controller) newTopicState(img *metadata.Image) *topicState {
	st := &topicState{img: img, broker: c.brokerValues(img), registered: map[model.NodeID]bool{},
		racks: map[model.NodeID]string{}, taken: map[string]bool{}, normalized: map[string]string{}}
	for _, b := range img.Brokers() {
		// New replicas go to live brokers only; a manual assignment may
		// name any registered one, as in Kafka.
		if !b.Fenced {
			st.brokers = append(st.brokers, b.NodeID)
			st.racks[b.NodeID] = b.Rack
		}
		st.registered[b.NodeID] = true
	}
	return st
}

// collision returns a taken name that differs from name but collides with
// it, the least one so the message is stable. Kafka refuses such names
// because metric names replace '.' with '_'. Building the index costs one
// pass over the topics, done on first use.
func (st *topicState) collision(name string) (string, bool) {
	if !st.indexed {
		for _, t := range st.img.Topics() {
			st.index(t.Name)
		}
		st.indexed = true
	}
	other, ok := st.normalized[normalizeTopicName(name)]
	return other, ok && other != name
}

func (st *topicState) index(name string) {
	key := normalizeTopicName(name)
	if other, ok := st.normalized[key]; !ok || name < other {
		st.normalized[key] = name
	}
}

func (st *topicState) exists(name string) bool {
	_, ok := st.img.Topic(name)
	return ok || st.taken[name]
}

func (st *topicState) add(name string) {
	st.taken[name] = true
	st.collision(name) // make sure the index is built before adding to it
	st.index(name)
}

func normalizeTopicName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// checkTopicName applies Kafka's rules for topic names, with its messages.
func checkTopicName(name string) *failure {
	switch {
	case name == "":
		return fail(kerr.InvalidTopicException, "Topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return fail(kerr.InvalidTopicException, `Topic name cannot be "." or ".."`)
	case len(name) > maxTopicNameLength:
		return fail(kerr.InvalidTopicException, "Topic name is illegal, it can't be longer than %d characters, topic name: %s", maxTopicNameLength, name)
	}
	for i := 0; i < len(name); i++ {
		if ch := name[i]; !legalTopicChar(ch) {
			return fail(kerr.InvalidTopicException, "Topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

func legalTopicChar(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-'
}

// planTopic validates one topic and returns its result and records.
func (c *Controller) planTopic(st *topicState, t CreateTopic) (CreateTopicResult, []metadata.Record, *failure) {
	var res CreateTopicResult
	if f := checkTopicName(t.Name); f != nil {
		return res, nil, f
	}
	if t.Name == clusterMetadataTopic {
		return res, nil, fail(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", clusterMetadataTopic)
	}
	if metadata.IsInternalTopic(t.Name) && !t.Internal {
		return res, nil, fail(kerr.InvalidRequest, "Creation of internal topic %s is prohibited: the broker creates it on first use, with its own settings.", t.Name)
	}
	if st.exists(t.Name) {
		return res, nil, fail(kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.Name)
	}
	if other, ok := st.collision(t.Name); ok {
		return res, nil, fail(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", t.Name, other)
	}
	replicas, f := c.planReplicas(st, t)
	if f != nil {
		return res, nil, f
	}
	overrides := map[string]string{}
	for name, v := range t.Configs {
		if v == nil {
			return res, nil, fail(kerr.InvalidConfig, "Null value not supported for topic configs: %s", name)
		}
		overrides[name] = *v
	}
	if err := config.Topic.CheckSupported(overrides); err != nil {
		return res, nil, configFailure(err)
	}
	resolved, err := config.ResolveTopic(st.broker, overrides)
	if err != nil {
		return res, nil, configFailure(err)
	}
	id, err := newTopicID(st.img)
	if err != nil {
		return res, nil, fail(kerr.UnknownServerError, "%v", err)
	}
	recs := []metadata.Record{metadata.TopicRecord{Name: t.Name, TopicID: id}}
	recs = appendPartitions(recs, id, 0, replicas)
	recs = appendConfigRecords(recs, metadata.ResourceTopic, t.Name, nil, overrides)
	res = CreateTopicResult{
		Name: t.Name, TopicID: id, NumPartitions: int32(len(replicas)), ReplicationFactor: int16(len(replicas[0])),
		Configs: resolved.DescribeAll(),
	}
	return res, recs, nil
}

// newTopicID draws a topic ID no topic has. A clash of 122 random bits will
// not happen, but the image would refuse it, so it costs one lookup to be sure.
func newTopicID(img *metadata.Image) (model.TopicID, error) {
	for {
		id, err := metadata.NewUUID(rand.Reader)
		if err != nil {
			return id, err
		}
		if _, taken := img.TopicByID(id); !taken {
			return id, nil
		}
	}
}

// planReplicas returns each new partition's replicas: the client's manual
// assignment, or a round-robin placement over the registered brokers.
func (c *Controller) planReplicas(st *topicState, t CreateTopic) ([][]model.NodeID, *failure) {
	if len(t.Assignments) > 0 {
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return nil, fail(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		lists := make([][]int32, len(t.Assignments))
		for p := range lists {
			a, ok := t.Assignments[int32(p)]
			if !ok {
				return nil, fail(kerr.InvalidReplicaAssignment, "Partitions should be a consecutive 0-based integer sequence; partition %d is missing.", p)
			}
			lists[p] = a
		}
		if f := checkManualAssignment(lists, st.registered, 0); f != nil {
			return nil, f
		}
		out := make([][]model.NodeID, len(lists))
		for p, a := range lists {
			out[p] = toNodes(a)
		}
		return out, nil
	}
	n := t.NumPartitions
	if n == -1 {
		n = c.static.Int("num.partitions")
	}
	if n <= 0 {
		return nil, fail(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
	}
	rf := int(t.ReplicationFactor)
	if rf == -1 {
		rf = int(c.static.Int("default.replication.factor"))
	}
	if rf <= 0 {
		return nil, fail(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
	}
	if rf > len(st.brokers) {
		return nil, fail(kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered and unfenced.", rf, rf, len(st.brokers))
	}
	return assignReplicas(st.brokers, st.racks, 0, n, rf, randomPlacement(len(st.brokers))), nil
}

// appendPartitions adds the records of new partitions numbered from first:
// the first replica leads, every replica is in sync (a new partition is
// empty), and both epochs start at 0.
func appendPartitions(recs []metadata.Record, id model.TopicID, first int32, replicas [][]model.NodeID) []metadata.Record {
	for i, r := range replicas {
		recs = append(recs, metadata.PartitionRecord{
			TopicID: id, Partition: first + int32(i), Replicas: r, ISR: slices.Clone(r), Leader: r[0],
		})
	}
	return recs
}

// DeleteTopics deletes topics by name or ID, all found ones in one committed
// batch. Errors: UNKNOWN_TOPIC_OR_PARTITION for an unknown name,
// UNKNOWN_TOPIC_ID for an unknown ID, INVALID_REQUEST for a topic named
// twice or named both ways at once, TOPIC_DELETION_DISABLED for all when
// delete.topic.enable is false.
func (c *Controller) DeleteTopics(ctx context.Context, topics []DeleteTopic) []DeleteTopicResult {
	results := make([]DeleteTopicResult, len(topics))
	for i, t := range topics {
		results[i] = DeleteTopicResult{Name: t.Name, TopicID: t.TopicID}
	}
	setAll := func(idx []int, f *failure) {
		for _, i := range idx {
			results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message()
		}
	}
	all := make([]int, len(topics))
	for i := range all {
		all[i] = i
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		setAll(all, proposeFailure(err))
		return results
	}
	if !c.static.Bool("delete.topic.enable") {
		setAll(all, fail(kerr.TopicDeletionDisabled, "Topic deletion is disabled."))
		return results
	}
	img := c.Image()
	resolved := make([]*metadata.TopicImage, len(topics))
	refs := map[model.TopicID]int{}
	for i, t := range topics {
		tp, f := findTopic(img, t)
		if f != nil {
			setAll([]int{i}, f)
			continue
		}
		resolved[i] = tp
		results[i].Name, results[i].TopicID = tp.Name, tp.ID
		refs[tp.ID]++
	}
	var recs []metadata.Record
	var planned []int
	for i, tp := range resolved {
		switch {
		case tp == nil:
		case refs[tp.ID] > 1:
			setAll([]int{i}, fail(kerr.InvalidRequest, "Duplicate topic %s in request.", tp.Name))
		case metadata.IsInternalTopic(tp.Name):
			setAll([]int{i}, fail(kerr.InvalidRequest, "Deletion of internal topic %s is prohibited: the broker's coordinators keep their state in it.", tp.Name))
		default:
			recs = append(recs, metadata.RemoveTopic{TopicID: tp.ID})
			planned = append(planned, i)
		}
	}
	if len(recs) == 0 {
		return results
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		setAll(planned, proposeFailure(err))
		return results
	}
	for _, i := range planned {
		c.log.Info("topic deleted", "topic", results[i].Name, "topic_id", metadata.FormatUUID(results[i].TopicID))
	}
	return results
}

func findTopic(img *metadata.Image, t DeleteTopic) (*metadata.TopicImage, *failure) {
	hasID := t.TopicID != model.TopicID{}
	switch {
	case t.Name != "" && hasID:
		return nil, fail(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
	case hasID:
		tp, ok := img.TopicByID(t.TopicID)
		if !ok {
			return nil, fail(kerr.UnknownTopicID, "Unknown topic ID %s.", metadata.FormatUUID(t.TopicID))
		}
		return tp, nil
	}
	tp, ok := img.Topic(t.Name)
	if !ok {
		return nil, fail(kerr.UnknownTopicOrPartition, "Unknown topic %q.", t.Name)
	}
	return tp, nil
}

// CreatePartitions grows topics, all valid ones in one committed batch.
// Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS when the count is
// not above the current one, INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR
// when the topic's replication factor exceeds the registered brokers,
// INVALID_REQUEST for a topic given twice, POLICY_VIOLATION for all past
// 10000 new partitions.
func (c *Controller) CreatePartitions(ctx context.Context, topics []CreatePartitions, validateOnly bool) []CreatePartitionsResult {
	results := make([]CreatePartitionsResult, len(topics))
	for i, t := range topics {
		results[i].Topic = t.Topic
	}
	setResult := func(i int, f *failure) { results[i].ErrorCode, results[i].ErrorMessage = f.code(), f.message() }
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		for i := range results {
			setResult(i, proposeFailure(err))
		}
		return results
	}
	st := c.newTopicState(c.Image())
	names := map[string]int{}
	var total int64
	for _, t := range topics {
		names[t.Topic]++
		if tp, ok := st.img.Topic(t.Topic); ok && int(t.Count) > len(tp.Partitions) {
			total += int64(int(t.Count) - len(tp.Partitions))
		}
	}
	if total > maxPartitionsPerRequest {
		for i := range results {
			setResult(i, fail(kerr.PolicyViolation, "Excessively large number of partitions per request."))
		}
		return results
	}
	var recs []metadata.Record
	var planned []int
	for i, t := range topics {
		if names[t.Topic] > 1 {
			setResult(i, fail(kerr.InvalidRequest, "Duplicate topic name."))
			continue
		}
		topicRecs, f := planPartitions(st, t)
		if f != nil {
			setResult(i, f)
			continue
		}
		recs = append(recs, topicRecs...)
		planned = append(planned, i)
	}
	if validateOnly || len(recs) == 0 {
		return results
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		for _, i := range planned {
			setResult(i, proposeFailure(err))
		}
	}
	return results
}

func planPartitions(st *topicState, t CreatePartitions) ([]metadata.Record, *failure) {
	tp, ok := st.img.Topic(t.Topic)
	if !ok {
		return nil, fail(kerr.UnknownTopicOrPartition, "This server does not host this topic: %s", t.Topic)
	}
	if metadata.IsInternalTopic(t.Topic) {
		return nil, fail(kerr.InvalidRequest, "Changing the partition count of internal topic %s is prohibited: its coordinators hash keys to partitions by the count.", t.Topic)
	}
	cur := int32(len(tp.Partitions))
	switch {
	case t.Count == cur:
		return nil, fail(kerr.InvalidPartitions, "Topic already has %d partition(s).", cur)
	case t.Count < cur:
		return nil, fail(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", t.Topic, cur, t.Count)
	}
	add := t.Count - cur
	rf := tp.ReplicationFactor()
	if len(t.Assignments) > 0 {
		if int32(len(t.Assignments)) != add {
			return nil, fail(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(t.Assignments))
		}
		if f := checkManualAssignment(t.Assignments, st.registered, rf); f != nil {
			return nil, f
		}
		replicas := make([][]model.NodeID, len(t.Assignments))
		for i, a := range t.Assignments {
			replicas[i] = toNodes(a)
		}
		return appendPartitions(nil, tp.ID, cur, replicas), nil
	}
	if rf > len(st.brokers) {
		return nil, fail(kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered and unfenced.", rf, rf, len(st.brokers))
	}
	return appendPartitions(nil, tp.ID, cur, assignReplicas(st.brokers, st.racks, cur, add, rf, randomPlacement(len(st.brokers)))), nil
}

// appendConfigRecords adds the records that turn the current configs of a
// resource into next: a set for each new or changed value, a delete for each
// name that is gone, in name order so the batch is deterministic.
func appendConfigRecords(recs []metadata.Record, typ metadata.ResourceType, name string, current, next map[string]string) []metadata.Record {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if cur, ok := current[k]; !ok || cur != next[k] {
			v := next[k]
			recs = append(recs, metadata.ConfigRecord{ResourceType: typ, ResourceName: name, Name: k, Value: &v})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(current)) {
		if _, ok := next[k]; !ok {
			recs = append(recs, metadata.ConfigRecord{ResourceType: typ, ResourceName: name, Name: k})
		}
	}
	return recs
}
