package restproxy

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/task"
)

// Confluent's defaults for v2 consumer instances (KafkaRestConfig).
const (
	// DefaultConsumerInstanceTimeout is consumer.instance.timeout.ms: an
	// instance idle this long is closed.
	DefaultConsumerInstanceTimeout = 300 * time.Second
	// defaultConsumerRequestWait is consumer.request.timeout.ms: the
	// longest a records read waits for records.
	defaultConsumerRequestWait = time.Second
	// consumerRequestMaxBytes is consumer.request.max.bytes: the most key
	// and value bytes one records read answers.
	consumerRequestMaxBytes = 64 << 20
	// autoCommitInterval is Kafka's auto.commit.interval.ms default, for
	// an instance with assigned partitions (a group member's auto
	// commits are franz-go's, at the same interval).
	autoCommitInterval = 5 * time.Second
	// autoCommitTimeout bounds a commit made on the way out.
	autoCommitTimeout = 10 * time.Second
)

// instanceKey names a consumer instance: the principal that made it, its
// group and its name. Keyed by principal, one principal's instance is
// invisible to another (404), and two principals may use the same name.
type instanceKey struct{ principal, group, name string }

// consumerManager holds the v2 consumer instances of one proxy. Each
// instance lives in this process only: see DESIGN-restproxy.md.
type consumerManager struct {
	timeout time.Duration
	clock   clock.Clock
	tasks   *task.Group

	mu        sync.Mutex
	instances map[instanceKey]*consumerInstance // guarded by mu
	closed    bool                              // guarded by mu
}

func newConsumerManager(timeout time.Duration) *consumerManager {
	m := &consumerManager{
		timeout:   timeout,
		clock:     clock.Real,
		tasks:     task.NewGroup(context.Background()),
		instances: make(map[instanceKey]*consumerInstance),
	}
	// Expiry is checked at a quarter of the timeout (at most each
	// second), so an idle instance lives at most 1.25 times it.
	m.tasks.Every(min(timeout/4, time.Second), func(context.Context) { m.expire() })
	return m
}

// add registers a new instance, or answers 40902 when the name is taken.
func (m *consumerManager) add(ci *consumerInstance) *Error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return &Error{http.StatusServiceUnavailable, http.StatusServiceUnavailable, "The REST Proxy is shutting down."}
	}
	if _, ok := m.instances[ci.key]; ok {
		return errConsumerAlreadyExists()
	}
	ci.touch(m.clock.Now())
	m.instances[ci.key] = ci
	return nil
}

// get finds an instance and marks it used now (Confluent's
// updateExpiration on every access).
func (m *consumerManager) get(key instanceKey) (*consumerInstance, *Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ci, ok := m.instances[key]
	if !ok {
		return nil, errConsumerInstanceNotFound()
	}
	ci.touch(m.clock.Now())
	return ci, nil
}

// remove takes an instance out and closes it.
func (m *consumerManager) remove(key instanceKey) *Error {
	m.mu.Lock()
	ci, ok := m.instances[key]
	delete(m.instances, key)
	m.mu.Unlock()
	if !ok {
		return errConsumerInstanceNotFound()
	}
	ci.close()
	return nil
}

// expire closes every instance idle past the timeout. An instance in the
// middle of a request is not idle.
func (m *consumerManager) expire() {
	now := m.clock.Now()
	var expired []*consumerInstance
	m.mu.Lock()
	for k, ci := range m.instances {
		if ci.idleSince(now) >= m.timeout {
			delete(m.instances, k)
			expired = append(expired, ci)
		}
	}
	m.mu.Unlock()
	for _, ci := range expired {
		ci.close()
	}
}

// close stops expiry and closes every instance, each leaving its group.
func (m *consumerManager) close() {
	m.tasks.Stop()
	m.mu.Lock()
	m.closed = true
	all := m.instances
	m.instances = nil
	m.mu.Unlock()
	// Closing leaves the group, a round trip each: in parallel.
	g := task.NewGroup(context.Background())
	for _, ci := range all {
		g.Go(func(context.Context) { ci.close() })
	}
	g.Stop() // waits for every close
}

// instanceConfig is what a consumer instance was created with.
type instanceConfig struct {
	format      embeddedFormat
	reset       kgo.Offset
	resetNone   bool // auto.offset.reset none: no reset, an error instead
	autoCommit  bool
	minBytes    int64 // fetch.min.bytes of a read's answer; -1: none
	requestWait time.Duration
}

// consumerInstance is one v2 consumer instance: at most one franz-go
// client at a time, a member of the group while subscribed.
//
// Lock order: consumerManager.mu, then consumerInstance.opMu, then
// consumerInstance.mu; mu is never held across a Kafka call, since
// franz-go's rebalance callbacks (onAssigned, onRevoked, onLost) take it
// on the group's goroutine while a read holds opMu in PollFetches, and a
// client's Close waits for those callbacks.
type consumerInstance struct {
	key  instanceKey
	cfg  instanceConfig
	kc   *kafkaClient // the identity that made it: its options, its admin client
	opts []kgo.Opt

	// opMu serialises the instance's operations, as Confluent's
	// KafkaConsumerState methods are synchronized.
	opMu     sync.Mutex
	client   *kgo.Client        // guarded by opMu; nil until subscribed or assigned
	topics   []string           // guarded by opMu; subscribed topics
	pattern  string             // guarded by opMu; subscribed topic_pattern
	assigned []v2TopicPartition // guarded by opMu; manual assignment
	// assignStart is where an assigning instance's client started each
	// partition. guarded by opMu.
	assignStart map[v2TopicPartition]kgo.Offset
	consumed    map[v2TopicPartition]int64 // guarded by opMu; next offset after the last record answered
	lastAuto    time.Time                  // guarded by opMu; an assigning instance's last auto commit
	closedOnce  sync.Once
	// closed is set once the instance is closed: a request that found it
	// before it was removed gets 404 rather than a new client nobody
	// would close. guarded by opMu.
	closed bool

	// mu guards what the group's rebalance callbacks change, which run
	// on franz-go's goroutines while a read may hold opMu.
	mu       sync.Mutex
	lastUsed time.Time                 // guarded by mu
	busy     int                       // guarded by mu; requests running
	owned    map[v2TopicPartition]bool // guarded by mu; the group's assignment
	buffered []*kgo.Record             // guarded by mu; polled, not yet answered
}

// v2TopicPartition is a partition as v2 bodies name it (TopicPartition).
type v2TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

func (ci *consumerInstance) touch(now time.Time) {
	ci.mu.Lock()
	ci.lastUsed = now
	ci.mu.Unlock()
}

func (ci *consumerInstance) idleSince(now time.Time) time.Duration {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	if ci.busy > 0 {
		return 0
	}
	return now.Sub(ci.lastUsed)
}

// begin and end bracket a request on the instance, so expiry never
// closes an instance mid-request and counts idleness from its end.
func (ci *consumerInstance) begin() *Error {
	ci.mu.Lock()
	ci.busy++
	ci.mu.Unlock()
	ci.opMu.Lock()
	if ci.closed {
		ci.end(time.Time{})
		return errConsumerInstanceNotFound()
	}
	return nil
}

func (ci *consumerInstance) end(now time.Time) {
	ci.opMu.Unlock()
	ci.mu.Lock()
	ci.busy--
	ci.lastUsed = now
	ci.mu.Unlock()
}

// close leaves the group (the client's Close does) and drops the client.
func (ci *consumerInstance) close() {
	ci.closedOnce.Do(func() {
		ci.opMu.Lock()
		defer ci.opMu.Unlock()
		ci.closed = true
		ci.closeClientLocked()
	})
}

func (ci *consumerInstance) closeClientLocked() {
	if ci.client != nil && len(ci.assigned) > 0 && ci.cfg.autoCommit {
		// KafkaConsumer.close commits with auto commit on; a group
		// member does so in onRevoked as it leaves.
		ctx, cancel := context.WithTimeout(context.Background(), autoCommitTimeout)
		_ = ci.commitLocked(ctx, ci.consumedOffsetsLocked())
		cancel()
	}
	if ci.client != nil {
		ci.client.Close()
		ci.client = nil
	}
	ci.topics, ci.pattern, ci.assigned = nil, "", nil
	ci.consumed = make(map[v2TopicPartition]int64)
	ci.mu.Lock()
	ci.owned = nil
	ci.buffered = nil
	ci.mu.Unlock()
}

// parseInstanceConfig checks a create request as Confluent's
// CreateConsumerInstanceRequest and KafkaConsumer's config do.
func parseInstanceConfig(r *createConsumerRequest) (instanceConfig, *Error) {
	cfg := instanceConfig{format: formatBinary, reset: kgo.NewOffset().AtEnd(), autoCommit: true, minBytes: -1, requestWait: defaultConsumerRequestWait}
	if r.Format != nil {
		f, ok := parseEmbeddedFormat(strings.ToLower(*r.Format))
		if !ok {
			return cfg, &Error{http.StatusUnprocessableEntity, codeConstraintViolation, "Invalid format type."}
		}
		cfg.format = f
	}
	if r.AutoOffsetReset != nil {
		switch *r.AutoOffsetReset {
		case "earliest":
			cfg.reset = kgo.NewOffset().AtStart()
		case "latest":
		case "none":
			cfg.resetNone = true
		default:
			return cfg, errInvalidConsumerConfig(fmt.Sprintf("Invalid value %s for configuration auto.offset.reset: String must be one of: latest, earliest, none", *r.AutoOffsetReset))
		}
	}
	if r.AutoCommitEnable != nil {
		switch v := strings.ToLower(string(*r.AutoCommitEnable)); v {
		case "true", "false":
			cfg.autoCommit = v == "true"
		default:
			return cfg, errInvalidConsumerConfig(fmt.Sprintf("Invalid value %s for configuration enable.auto.commit: Expected value to be either true or false", *r.AutoCommitEnable))
		}
	}
	if r.FetchMinBytes != nil {
		if int64(*r.FetchMinBytes) < -1 {
			return cfg, &Error{http.StatusUnprocessableEntity, codeInvalidConsumerConfigConstraint,
				fmt.Sprintf("Invalid consumer configuration. It does not abide by the constraints: Invalid value %d for configuration fetch.min.bytes: Value must be at least -1", *r.FetchMinBytes)}
		}
		cfg.minBytes = int64(*r.FetchMinBytes)
	}
	if r.RequestTimeoutMs != nil {
		if *r.RequestTimeoutMs <= 0 {
			return cfg, errInvalidConsumerConfig(fmt.Sprintf("Invalid value %d for configuration consumer.request.timeout.ms: must be positive", *r.RequestTimeoutMs))
		}
		cfg.requestWait = time.Duration(*r.RequestTimeoutMs) * time.Millisecond
	}
	return cfg, nil
}

// instanceName is the name asked for (id before name, as Confluent), or
// a fresh rest-consumer-<uuid>.
func instanceName(r *createConsumerRequest) string {
	switch {
	case r.ID != nil:
		return *r.ID
	case r.Name != nil:
		return *r.Name
	}
	return "rest-consumer-" + randomUUID()
}

// startOffset is where a partition without a committed offset starts.
func (ci *consumerInstance) startOffset() kgo.Offset {
	if ci.cfg.resetNone {
		return kgo.NoResetOffset()
	}
	return ci.cfg.reset
}

// commonOpts are the options of every client the instance makes: its
// identity's, and the reset and commit settings it was created with.
func (ci *consumerInstance) commonOpts() []kgo.Opt {
	opts := append(slices.Clone(ci.opts), kgo.ConsumeResetOffset(ci.startOffset()))
	return opts
}

// subscribe replaces the subscription (as KafkaConsumer.subscribe does)
// with a fresh group member: the old client leaves the group first.
func (ci *consumerInstance) subscribeLocked(topics []string, pattern string) error {
	if len(ci.assigned) > 0 {
		return errIllegalState("Subscription to topics, partitions and pattern are mutually exclusive")
	}
	if pattern != "" {
		if _, err := regexp.Compile(pattern); err != nil {
			return errBadRequest(fmt.Sprintf("Bad Request: topic_pattern %q: %v", pattern, err))
		}
	}
	ci.closeClientLocked()
	opts := append(ci.commonOpts(),
		kgo.ConsumerGroup(ci.key.group),
		// The Java consumer's default assignors (range first, then
		// cooperative-sticky), which Confluent's instances use: with
		// franz-go's default (cooperative-sticky only) an instance could
		// not join a group of librdkafka consumers, whose defaults are
		// range and roundrobin (INCONSISTENT_GROUP_PROTOCOL).
		kgo.Balancers(kgo.RangeBalancer(), kgo.CooperativeStickyBalancer()),
		kgo.OnPartitionsAssigned(ci.onAssigned),
		kgo.OnPartitionsRevoked(ci.onRevoked),
		kgo.OnPartitionsLost(ci.onLost),
	)
	if pattern != "" {
		// Kafka's pattern matches a whole topic name; Go's regexp matches
		// anywhere unless anchored.
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics("^(?:"+pattern+")$"))
	} else {
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	if ci.cfg.autoCommit {
		// Only records answered to the client are committed: the ones
		// polled and buffered past a read's max_bytes are not consumed.
		opts = append(opts, kgo.AutoCommitMarks())
	} else {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return errInvalidConsumerConfig(err.Error())
	}
	ci.client, ci.topics, ci.pattern = cl, topics, pattern
	ci.mu.Lock()
	ci.owned = make(map[v2TopicPartition]bool)
	ci.mu.Unlock()
	return nil
}

func (ci *consumerInstance) onAssigned(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	if ci.owned == nil {
		return
	}
	for t, parts := range ps {
		for _, p := range parts {
			ci.owned[v2TopicPartition{t, p}] = true
		}
	}
}

// onRevoked commits what was answered from the revoked partitions when
// auto commit is on (setting this callback replaces franz-go's own
// commit-on-revoke), then forgets them.
func (ci *consumerInstance) onRevoked(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
	if ci.cfg.autoCommit {
		// Not ctx: when the member leaves, the group's context is already
		// cancelled (franz-go's own revoke commit uses the client's).
		cctx, cancel := context.WithTimeout(context.Background(), autoCommitTimeout)
		_ = cl.CommitMarkedOffsets(cctx) // as franz-go's default: a failed final commit means a re-read, not a loss
		cancel()
	}
	ci.onLost(ctx, cl, ps)
}

// onLost drops the partitions and the records buffered from them:
// another member owns them now, and answering them would consume them
// twice.
func (ci *consumerInstance) onLost(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	gone := make(map[v2TopicPartition]bool)
	for t, parts := range ps {
		for _, p := range parts {
			tp := v2TopicPartition{t, p}
			gone[tp] = true
			delete(ci.owned, tp)
		}
	}
	ci.buffered = slices.DeleteFunc(ci.buffered, func(r *kgo.Record) bool { return gone[v2TopicPartition{r.Topic, r.Partition}] })
}

// assign consumes exactly the given partitions (KafkaConsumer.assign),
// with no group membership: each starts at the group's committed offset,
// else at auto.offset.reset.
func (ci *consumerInstance) assignLocked(ctx context.Context, tps []v2TopicPartition) error {
	if len(ci.topics) > 0 || ci.pattern != "" {
		return errIllegalState("Subscription to topics, partitions and pattern are mutually exclusive")
	}
	ci.closeClientLocked()
	if len(tps) == 0 {
		return nil // assign([]) is unsubscribe
	}
	committed, err := ci.kc.admin.FetchOffsets(ctx, ci.key.group)
	if err != nil {
		return err
	}
	start := make(map[v2TopicPartition]kgo.Offset, len(tps))
	for _, tp := range tps {
		o := ci.startOffset()
		if c, ok := committed.Lookup(tp.Topic, tp.Partition); ok && c.Err == nil && c.At >= 0 {
			o = kgo.NewOffset().At(c.At).WithEpoch(c.LeaderEpoch)
		}
		start[tp] = o
	}
	ci.assigned = slices.Clone(tps)
	return ci.consumeAssignedLocked(start)
}

// consumeAssignedLocked (re)starts the client of an assigning instance
// at the given offsets. Seeking an assigned partition restarts it too:
// franz-go's SetOffsets skips a partition its new client has not begun
// to consume yet, which right after an assign is every one.
func (ci *consumerInstance) consumeAssignedLocked(start map[v2TopicPartition]kgo.Offset) error {
	if ci.client != nil {
		ci.client.Close()
		ci.client = nil
	}
	ci.mu.Lock()
	ci.buffered = nil
	ci.mu.Unlock()
	ci.assignStart = start
	byTopic := make(map[string]map[int32]kgo.Offset)
	for tp, o := range start {
		if byTopic[tp.Topic] == nil {
			byTopic[tp.Topic] = make(map[int32]kgo.Offset)
		}
		byTopic[tp.Topic][tp.Partition] = o
	}
	cl, err := kgo.NewClient(append(ci.commonOpts(), kgo.ConsumePartitions(byTopic))...)
	if err != nil {
		ci.assigned = nil
		return errInvalidConsumerConfig(err.Error())
	}
	ci.client = cl
	return nil
}

// subscription is the subscribed topics: for a pattern, the topics it
// matches now (as KafkaConsumer.subscription answers).
func (ci *consumerInstance) subscriptionLocked() []string {
	var topics []string
	switch {
	case ci.pattern != "" && ci.client != nil:
		topics = ci.client.GetConsumeTopics()
	case len(ci.topics) > 0:
		topics = slices.Clone(ci.topics)
	}
	sort.Strings(topics)
	return topics
}

// assignment is the partitions the instance consumes now.
func (ci *consumerInstance) assignmentLocked() []v2TopicPartition {
	var tps []v2TopicPartition
	if len(ci.assigned) > 0 {
		tps = slices.Clone(ci.assigned)
	} else {
		ci.mu.Lock()
		for tp := range ci.owned {
			tps = append(tps, tp)
		}
		ci.mu.Unlock()
	}
	sortPartitions(tps)
	return tps
}

func sortPartitions(tps []v2TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// readLocked answers records as Confluent's KafkaConsumerReadTask: until
// wait passes, the answer's key and value bytes pass minBytes, or the
// next record would reach maxBytes (that record stays for the next read).
func (ci *consumerInstance) readLocked(ctx context.Context, wait time.Duration, maxBytes int64) ([]*kgo.Record, error) {
	if ci.client == nil {
		// KafkaConsumer.poll's IllegalStateException, answered as
		// Confluent answers it from the other endpoints.
		return nil, errIllegalState("Consumer is not subscribed to any topics or assigned any partitions")
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	minBytes := ci.cfg.minBytes
	if minBytes < 0 {
		minBytes = 1<<63 - 1
	}
	var out []*kgo.Record
	var size int64
	for {
		full := false
		out, size, full = ci.takeBuffered(out, size, minBytes, maxBytes)
		if full || ctx.Err() != nil {
			break
		}
		fetches := ci.client.PollFetches(ctx)
		if err := fetchError(ctx, fetches); err != nil {
			if len(out) > 0 {
				break // answer what was read; the next read meets the error again
			}
			return nil, err
		}
		ci.mu.Lock()
		fetches.EachRecord(func(r *kgo.Record) {
			if ci.owned == nil || ci.owned[v2TopicPartition{r.Topic, r.Partition}] {
				ci.buffered = append(ci.buffered, r)
			}
		})
		ci.mu.Unlock()
	}
	return out, nil // consumed once answered: markConsumedLocked
}

// takeBuffered moves every buffered record that fits to out; full says
// the answer is complete: past minBytes, or the next record would reach
// maxBytes. Like Confluent's read task, records already polled are all
// answered (up to maxBytes) even past minBytes; minBytes only says
// whether to poll for more.
func (ci *consumerInstance) takeBuffered(out []*kgo.Record, size, minBytes, maxBytes int64) ([]*kgo.Record, int64, bool) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	n := 0
	full := false
	for _, r := range ci.buffered {
		rs := int64(len(r.Key) + len(r.Value))
		if size+rs >= maxBytes {
			full = true
			break
		}
		out = append(out, r)
		size += rs
		n++
	}
	ci.buffered = ci.buffered[n:]
	return out, size, full || size > minBytes
}

// fetchError is the first error of a poll that is not the read's own
// deadline or the client closing.
func fetchError(ctx context.Context, fs kgo.Fetches) error {
	for _, fe := range fs.Errors() {
		if ctx.Err() != nil || fe.Err == context.DeadlineExceeded || fe.Err == context.Canceled || fe.Err == kgo.ErrClientClosed {
			continue
		}
		return fmt.Errorf("restproxy: consume %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
	}
	return nil
}

// markConsumedLocked records what was answered: the offsets a commit of
// "everything consumed" commits, and the marks auto commit commits.
func (ci *consumerInstance) markConsumedLocked(rs []*kgo.Record) {
	for _, r := range rs {
		ci.consumed[v2TopicPartition{r.Topic, r.Partition}] = r.Offset + 1
	}
	if ci.cfg.autoCommit && ci.client != nil && len(rs) > 0 && len(ci.assigned) == 0 {
		ci.client.MarkCommitRecords(rs...)
	}
}

// maybeAutoCommitLocked commits an assigning instance's consumed offsets
// every autoCommitInterval, as KafkaConsumer's poll does.
func (ci *consumerInstance) maybeAutoCommitLocked(ctx context.Context, now time.Time) error {
	if !ci.cfg.autoCommit || len(ci.assigned) == 0 || now.Sub(ci.lastAuto) < autoCommitInterval {
		return nil
	}
	ci.lastAuto = now
	return ci.commitLocked(ctx, ci.consumedOffsetsLocked())
}

// commitLocked commits offsets (each the next offset to read) with their
// metadata. While subscribed the commit carries the member's ID and
// generation, as KafkaConsumer's does, so the coordinator refuses it from
// a member the group has moved past; otherwise it is a simple commit
// (generation -1), as KafkaConsumer commits assigned partitions.
func (ci *consumerInstance) commitLocked(ctx context.Context, offsets map[v2TopicPartition]kadm.Offset) error {
	if len(offsets) == 0 {
		return nil
	}
	ids, err := ci.topicIDs(ctx, offsets)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = ci.key.group
	req.Generation = -1
	if ci.client != nil && len(ci.assigned) == 0 {
		req.MemberID, req.Generation = ci.client.GroupMetadata()
	}
	byTopic := make(map[string]int)
	for _, o := range offsets {
		i, ok := byTopic[o.Topic]
		if !ok {
			i = len(req.Topics)
			byTopic[o.Topic] = i
			t := kmsg.NewOffsetCommitRequestTopic()
			t.Topic, t.TopicID = o.Topic, ids[o.Topic]
			req.Topics = append(req.Topics, t)
		}
		part := kmsg.NewOffsetCommitRequestTopicPartition()
		part.Partition, part.Offset, part.LeaderEpoch = o.Partition, o.At, -1
		if o.Metadata != "" {
			part.Metadata = &o.Metadata
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, part)
	}
	resp, err := req.RequestWith(ctx, ci.kc.client)
	return commitResponseError(resp, err)
}

// topicIDs are the IDs of the offsets' topics: OffsetCommit v10 names
// topics by ID. A topic that does not exist is 404 40403.
func (ci *consumerInstance) topicIDs(ctx context.Context, offsets map[v2TopicPartition]kadm.Offset) (map[string][16]byte, error) {
	var topics []string
	for tp := range offsets {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	md, err := ci.kc.admin.Metadata(ctx, topics...)
	if err != nil {
		return nil, err
	}
	ids := make(map[string][16]byte, len(topics))
	for _, t := range topics {
		td, ok := md.Topics[t]
		if !ok || td.Err != nil {
			return nil, errTopicNotFound()
		}
		ids[t] = [16]byte(td.ID)
	}
	return ids, nil
}

// unreadLocked puts records a read took back in front of the buffer.
func (ci *consumerInstance) unreadLocked(rs []*kgo.Record) {
	ci.mu.Lock()
	ci.buffered = append(slices.Clone(rs), ci.buffered...)
	ci.mu.Unlock()
}

// consumedOffsetsLocked is every partition's offset after its last
// answered record: what a commit without a body commits.
func (ci *consumerInstance) consumedOffsetsLocked() map[v2TopicPartition]kadm.Offset {
	out := make(map[v2TopicPartition]kadm.Offset, len(ci.consumed))
	for tp, next := range ci.consumed {
		out[tp] = kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: next, LeaderEpoch: -1}
	}
	return out
}

// seekLocked moves partitions the instance consumes to new offsets; a
// partition it does not consume is Confluent's 409 40903, as
// KafkaConsumer.seek throws IllegalStateException.
func (ci *consumerInstance) seekLocked(offsets map[v2TopicPartition]int64) error {
	owned := make(map[v2TopicPartition]bool)
	for _, tp := range ci.assignmentLocked() {
		owned[tp] = true
	}
	set := make(map[string]map[int32]kgo.EpochOffset)
	for tp, o := range offsets {
		if !owned[tp] || ci.client == nil {
			return errIllegalState(fmt.Sprintf("No current assignment for partition %s-%d", tp.Topic, tp.Partition))
		}
		if set[tp.Topic] == nil {
			set[tp.Topic] = make(map[int32]kgo.EpochOffset)
		}
		set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	if len(set) == 0 {
		return nil
	}
	if len(ci.assigned) > 0 {
		// Every partition restarts where the client would read next.
		start := make(map[v2TopicPartition]kgo.Offset, len(ci.assigned))
		for _, tp := range ci.assigned {
			switch o, seeked := offsets[tp]; {
			case seeked:
				start[tp] = kgo.NewOffset().At(o)
			case ci.consumed[tp] > 0:
				start[tp] = kgo.NewOffset().At(ci.consumed[tp])
			default:
				start[tp] = ci.assignStart[tp]
			}
		}
		return ci.consumeAssignedLocked(start)
	}
	ci.client.SetOffsets(set)
	// Records buffered from before the seek are not what the client
	// asked to read next.
	ci.mu.Lock()
	ci.buffered = slices.DeleteFunc(ci.buffered, func(r *kgo.Record) bool {
		_, moved := offsets[v2TopicPartition{r.Topic, r.Partition}]
		return moved
	})
	ci.mu.Unlock()
	return nil
}

// commitResponseError is a commit's error: the request's, or the first
// partition's.
func commitResponseError(resp *kmsg.OffsetCommitResponse, err error) error {
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("restproxy: commit %s[%d]: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// randomUUID is a version 4 UUID, as Java's UUID.randomUUID names
// Confluent's instances.
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
