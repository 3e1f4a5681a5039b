package group

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/coordlog"
	"github.com/samsa-io/samsa/internal/task"
)

// Log is the coordinator's view of __consumer_offsets. The broker adapts it
// to its partitions; MemLog is an in-memory twin for tests.
type Log interface {
	// Append appends one record batch, built by this package with offsets
	// 0..n-1, to the partition, and returns once the batch is as durable as
	// an acks=all produce. To answer with a particular Kafka error, return
	// (or wrap) the kerr error: NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS,
	// MESSAGE_TOO_LARGE... are mapped as Kafka maps them. Other errors are
	// answered as COORDINATOR_NOT_AVAILABLE.
	//
	// A TxnOffsetCommit's batch is transactional, with the producer's ID
	// and epoch and base sequence 0: append it as Kafka appends a
	// coordinator's batch (no sequence check, but the producer's epoch is
	// checked and its transaction tracked, so that the marker the broker
	// writes later closes it). A fenced epoch is reported as the kerr
	// error the TxnOffsetCommit should answer (PRODUCER_FENCED...).
	Append(ctx context.Context, partition int32, batch []byte) error
	// ReadAll calls fn with the partition's batches from its start, in
	// offset order; one call may hold several concatenated batches, and
	// the bytes are valid only during the call. A partition that does not
	// exist yet has no batches.
	ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error
}

// Deps is what the coordinator needs from the rest of the broker.
type Deps struct {
	// Log is __consumer_offsets. Required.
	Log Log
	// TopicExists reports whether a topic has a partition; commits to
	// others answer UNKNOWN_TOPIC_OR_PARTITION. Nil: every partition exists.
	TopicExists func(topic string, partition int32) bool
	// TopicName and TopicID translate topic IDs for OffsetCommit and
	// OffsetFetch v10+, which name topics by ID. Nil: every ID is unknown
	// (UNKNOWN_TOPIC_ID).
	TopicName func(id [16]byte) (string, bool)
	TopicID   func(name string) ([16]byte, bool)
	// TopicPartitions is what consumer groups (KIP-848) assign from: a
	// topic's ID and partition count, false if it does not exist. Nil:
	// no topic exists, and consumer groups are assigned nothing. It is
	// called under a group's lock on every ConsumerGroupHeartbeat, once
	// per subscribed topic: it must be cheap and must not call back into
	// the coordinator.
	TopicPartitions func(name string) (id [16]byte, partitions int32, ok bool)
	// TopicNames lists the topics a consumer group's topic regex
	// (ConsumerGroupHeartbeat v1's SubscribedTopicRegex) may match: every
	// topic the member may describe, internal ones included, as Kafka
	// resolves it. Called at most once per heartbeat interval per
	// regex per group. Nil: regex subscriptions answer
	// INVALID_REGULAR_EXPRESSION.
	TopicNames func() []string
	// ShareStates is the share coordinator's state of share groups' partitions,
	// for DescribeShareGroupOffsets, AlterShareGroupOffsets and
	// DeleteShareGroupOffsets. Nil: those answer an error per partition.
	ShareStates ShareStates
	// DeleteShareState deletes a share group's state of the partitions it
	// initialized (topic ID to partitions), when DeleteGroups deletes the
	// group, before its records get tombstones. Nil: nothing to delete.
	DeleteShareState func(ctx context.Context, group string, topics map[[16]byte][]int32) error
	// HighWatermark is a partition's high watermark, for the lag
	// DescribeShareGroupOffsets v1 reports; false when unknown here. Nil:
	// the lag is -1.
	HighWatermark func(topic string, partition int32) (int64, bool)
	// CreateTopics creates the internal topics of streams groups
	// (KIP-1071's repartition and changelog topics), through the
	// controller. Called in the background, never under a group's lock.
	// Nil: they are not created, and the groups report them missing.
	CreateTopics func(ctx context.Context, topics []NewTopic) error
	// GroupConfigs returns a group's own configs (KIP-848 group config
	// resources: streams.session.timeout.ms...). Nil: no group has any.
	GroupConfigs func(groupID string) map[string]string
	// Clock is where time comes from; default clock.Real.
	Clock clock.Clock
	// Logger; default slog.Default(), with component=group.
	Logger *slog.Logger
}

// Coordinator is the group coordinator for the __consumer_offsets
// partitions this broker leads. Its methods are safe for concurrent use.
type Coordinator struct {
	cfg   Config
	deps  Deps
	clock clock.Clock
	log   *slog.Logger
	tasks *task.Group
	// newMemberID makes member IDs; tests replace it to get stable ones.
	newMemberID func(prefix string) string
	// waitHook, when set (by tests), runs each time a JoinGroup or
	// SyncGroup starts waiting, so a test knows the request is parked
	// without sleeping.
	waitHook func()
	// stats are the counts Stats reads; the turns add to them.
	stats stats
	// creating tracks the streams internal topics being created.
	creating streamsCreating

	mu struct {
		sync.Mutex
		// groups holds every group of the partitions loaded or loading.
		groups map[string]*group
		// partitions holds the __consumer_offsets partitions this
		// coordinator serves; requests for a group elsewhere answer
		// NOT_COORDINATOR.
		partitions coordlog.Partitions
		// txns indexes the groups with offsets pending in a transaction,
		// by __consumer_offsets partition and producer ID, for
		// CompleteTransaction. An entry may name a group that has since
		// left the table or dropped those offsets: completing it is a no-op.
		txns map[txnKey]map[*group]struct{}
		// late holds the CompleteTransaction calls for a partition that was
		// loading: the replay may have read the log before the marker.
		late map[int32][]txnCompletion
	}
}

// New returns a coordinator that serves no partition until Load.
func New(cfg Config, deps Deps) *Coordinator {
	cfg.fill()
	if deps.Clock == nil {
		deps.Clock = clock.Real
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	c := &Coordinator{
		cfg:         cfg,
		deps:        deps,
		clock:       deps.Clock,
		log:         deps.Logger.With("component", "group"),
		tasks:       task.NewGroup(context.Background()),
		newMemberID: randomMemberID,
	}
	c.mu.groups = make(map[string]*group)
	c.mu.partitions = coordlog.Partitions{}
	c.mu.txns = make(map[txnKey]map[*group]struct{})
	c.mu.late = make(map[int32][]txnCompletion)
	return c
}

// Start starts the timeout tick and the offset expiry sweep. The
// coordinator serves no partition until Load: the broker loads each
// __consumer_offsets partition it becomes the leader of, and unloads those
// it stops leading.
func (c *Coordinator) Start() {
	c.tasks.Every(c.cfg.TickInterval, func(context.Context) { c.tick() })
	c.tasks.Every(c.cfg.OffsetsRetentionCheckInterval, func(context.Context) { c.expireOffsets() })
}

// PartitionCode is the error a key of partition answers with now: 0 when
// served, COORDINATOR_LOAD_IN_PROGRESS while loading, NOT_COORDINATOR when
// not served.
func (c *Coordinator) PartitionCode(partition int32) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.partitions.Code(partition)
}

// MarkLoading marks a partition loading ahead of its Load, when this
// broker has just become its leader: its keys answer
// COORDINATOR_LOAD_IN_PROGRESS, not NOT_COORDINATOR, until the load. A
// partition served already keeps its state.
func (c *Coordinator) MarkLoading(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.partitions.MarkLoading(partition)
}

// Stop ends the background work and unloads every partition: waiting
// JoinGroup and SyncGroup requests are answered NOT_COORDINATOR.
func (c *Coordinator) Stop() {
	c.tasks.Stop()
	c.mu.Lock()
	parts := c.mu.partitions.List()
	c.mu.Unlock()
	for _, p := range parts {
		c.Unload(p)
	}
}

// Load replays a partition of __consumer_offsets and serves its groups:
// call it when this broker becomes the partition's leader. Meanwhile the
// partition's groups answer COORDINATOR_LOAD_IN_PROGRESS; if the replay
// fails they answer COORDINATOR_NOT_AVAILABLE until a Load succeeds. Load
// and Unload of one partition must not run concurrently.
func (c *Coordinator) Load(ctx context.Context, partition int32) error {
	c.setPartition(partition, coordlog.Loading)
	c.dropGroups(partition, codeCoordinatorLoadInProgress)
	start := c.clock.Now()
	groups, err := c.replay(ctx, partition)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.mu.partitions[partition] = coordlog.Failed
		return fmt.Errorf("group: load partition %d: %w", partition, err)
	}
	c.indexLoadedLocked(partition, groups)
	for _, g := range groups {
		c.mu.groups[g.id] = g
	}
	c.mu.partitions[partition] = coordlog.Active
	c.log.Debug("loaded __consumer_offsets partition", "partition", partition, "groups", len(groups),
		"took", c.clock.Now().Sub(start))
	return nil
}

// Unload stops serving a partition, when this broker is no longer its
// leader: its groups are forgotten and their waiting requests answered
// NOT_COORDINATOR, so clients look for the new coordinator.
func (c *Coordinator) Unload(partition int32) {
	c.mu.Lock()
	delete(c.mu.partitions, partition)
	c.dropTxnsLocked(partition)
	c.mu.Unlock()
	c.dropGroups(partition, codeNotCoordinator)
}

func (c *Coordinator) setPartition(partition int32, st coordlog.PartitionState) {
	c.mu.Lock()
	c.mu.partitions[partition] = st
	if st == coordlog.Loading {
		c.dropTxnsLocked(partition)
	}
	c.mu.Unlock()
}

// dropGroups removes a partition's groups from the table, answering their
// waiting requests with code.
func (c *Coordinator) dropGroups(partition int32, code int16) {
	for _, g := range c.snapshot(func(g *group) bool { return g.partition == partition }) {
		g.mu.Lock()
		s := c.newStep(g)
		g.classic.abandon(s, code)
		c.removeLocked(g)
		g.mu.Unlock()
		s.deliver()
	}
}

// snapshot lists the groups in the table that keep says to.
func (c *Coordinator) snapshot(keep func(*group) bool) []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		if keep == nil || keep(g) {
			out = append(out, g)
		}
	}
	return out
}

// lockGroup returns the group named id with its lock held, creating an
// empty classic group if there is none and create is set (a consumer
// group's first heartbeat converts it). With no group to
// use it returns nil and the error code to answer: NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS from the group's partition, or 0 when the
// group does not exist.
func (c *Coordinator) lockGroup(id string, create bool) (*group, int16) {
	partition := PartitionFor(id, c.cfg.OffsetsTopicNumPartitions)
	for {
		c.mu.Lock()
		if code := c.mu.partitions.Code(partition); code != 0 {
			c.mu.Unlock()
			return nil, code
		}
		g := c.mu.groups[id]
		if g == nil {
			if !create {
				c.mu.Unlock()
				return nil, 0
			}
			g = newGroup(strings.Clone(id), partition)
			c.mu.groups[g.id] = g
		}
		c.mu.Unlock()
		g.mu.Lock()
		if !g.removed {
			return g, 0
		}
		// Deleted or unloaded since the lookup: look again.
		g.mu.Unlock()
	}
}

// removeLocked takes a group out of the table; g.mu is held.
func (c *Coordinator) removeLocked(g *group) {
	g.removed = true
	c.mu.Lock()
	if c.mu.groups[g.id] == g {
		delete(c.mu.groups, g.id)
	}
	c.mu.Unlock()
}

func (c *Coordinator) newStep(g *group) *step {
	return &step{
		now: c.clock.Now(),
		cfg: &c.cfg,
		overrides: func() map[string]string {
			if c.deps.GroupConfigs == nil {
				return nil
			}
			return c.deps.GroupConfigs(g.id)
		},
		stats:       &c.stats,
		log:         c.log.With("group", g.id),
		newMemberID: c.newMemberID,
		topics: topicLookup{
			partitions: c.deps.TopicPartitions,
			names:      c.deps.TopicNames,
			name:       c.deps.TopicName,
		},
	}
}

// finishTurn ends a turn on g, whose lock is held: it appends what the turn
// wrote (running each write's done callback, which may write more), takes
// the group out of the table if it is Dead or nothing is left of it,
// releases the lock, and only then delivers the turn's replies.
func (c *Coordinator) finishTurn(g *group, s *step) {
	for i := 0; i < len(s.writes); i++ {
		w := s.writes[i]
		err := c.append(g.partition, w.records, w.producer, s.now)
		if w.done != nil {
			w.done(s, err)
		}
	}
	s.writes = nil
	// Counted once the writes are done: a failed one undid its turn.
	c.stats.consumerRebalances.Add(int64(s.epochBumps))
	s.epochBumps = 0
	if !g.removed && (g.blank() || g.dead()) {
		c.removeLocked(g)
	}
	g.mu.Unlock()
	s.deliver()
}

// append writes records as one batch to a partition of __consumer_offsets,
// a transactional one for a producer.
func (c *Coordinator) append(partition int32, records []kv, producer *txnProducer, now time.Time) error {
	batch, err := buildBatch(records, producer, now, c.cfg.OffsetsTopicCompression)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.tasks.Context(), c.cfg.CommitTimeout)
	defer cancel()
	return c.deps.Log.Append(ctx, partition, batch)
}

// tick applies the deadlines that have passed in every group. A group whose
// lock is busy (an append in flight) is left for the next tick rather than
// holding up all the others.
func (c *Coordinator) tick() {
	for _, g := range c.snapshot(nil) {
		if !g.mu.TryLock() {
			continue
		}
		if g.removed {
			g.mu.Unlock()
			continue
		}
		s := c.newStep(g)
		switch g.kind {
		case protocolClassic:
			g.classic.tick(s)
		case protocolShare:
			g.share.tick(s)
		case protocolStreams:
			g.streams.tick(s)
		default:
			g.consumer.tick(s)
		}
		c.finishTurn(g, s)
	}
}

// randomMemberID is Kafka's member ID: the client ID (or the instance ID of
// a static member), a dash and a random UUID.
func randomMemberID(prefix string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
