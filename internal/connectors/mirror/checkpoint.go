package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	mirrorrt "github.com/samsa-io/samsa/internal/mirror"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/version"
)

// CheckpointConnector is MirrorCheckpointConnector: it creates the
// checkpoints topic on the target, lists the source's consumer groups that
// the group filter passes (again every refresh.groups.interval.seconds) and
// deals them round robin to at most tasks.max tasks.
type CheckpointConnector struct {
	props map[string]string
	g     *task.Group

	mu     sync.Mutex
	groups []string // sorted
}

var (
	_ connect.SourceConnector    = (*CheckpointConnector)(nil)
	_ connect.ConnectorValidator = (*CheckpointConnector)(nil)
)

func (c *CheckpointConnector) Version() string             { return version.String() }
func (c *CheckpointConnector) Config() *connect.ConfigDef  { return configDef() }
func (c *CheckpointConnector) NewTask() connect.SourceTask { return &CheckpointTask{} }
func (c *CheckpointConnector) Validate(props map[string]string) []connect.ConfigValue {
	return validate(mirrorconf.CheckpointConnector, props)
}

// runs says whether the connector has work: Kafka's checkpoint connector
// has no tasks when disabled or when checkpoints are off (a negative
// interval), and Samsa's also when neither checkpoints nor group offset
// sync is on.
func checkpointsRun(cc *mirrorconf.ConnectorConfig) bool {
	return cc.Enabled && cc.Flow != nil && (cc.Flow.EmitCheckpoints || cc.Flow.SyncGroupOffsets)
}

func (c *CheckpointConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	cc, err := parse(mirrorconf.CheckpointConnector, props)
	if err != nil {
		return err
	}
	c.props = maps.Clone(props)
	if !checkpointsRun(cc) {
		return nil
	}
	f, cl := cc.Flow, clients{cfg: cc}
	c.g = task.NewGroup(context.Background())
	c.g.Go(func(gctx context.Context) {
		background(gctx, ctx.Logger(), "consumer group refresh", func(gctx context.Context) error {
			src, err := cl.client(f.Source, "admin")
			if err != nil {
				return err
			}
			defer src.Close()
			if f.EmitCheckpoints {
				tgt, err := cl.client(f.Target, "admin")
				if err != nil {
					return err
				}
				err = mirrorrt.EnsureCompactedTopic(gctx, kadm.NewClient(tgt), f.CheckpointsTopic(), 1, f.CheckpointsTopicReplicationFactor)
				tgt.Close()
				if err != nil {
					return err
				}
			}
			for {
				if err := c.refreshGroups(gctx, ctx, kadm.NewClient(src), f); err != nil {
					return err
				}
				every := f.RefreshGroupsInterval
				if !f.RefreshGroups {
					<-gctx.Done()
					return nil
				}
				if !sleep(gctx, every) {
					return nil
				}
			}
		})
	})
	return nil
}

func (c *CheckpointConnector) refreshGroups(ctx context.Context, cctx connect.ConnectorContext, adm *kadm.Client, f *mirrorconf.Flow) error {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list %s's consumer groups: %w", f.Source, err)
	}
	var groups []string
	for _, g := range listed.Groups() {
		if f.Groups.ShouldReplicateGroup(g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	c.mu.Lock()
	same := slices.Equal(groups, c.groups)
	c.groups = groups
	c.mu.Unlock()
	if !same {
		cctx.RequestTaskReconfiguration()
	}
	return nil
}

// TaskConfigs deals the groups round robin; none before the first listing
// or when no group matches.
func (c *CheckpointConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	c.mu.Lock()
	groups := slices.Clone(c.groups)
	c.mu.Unlock()
	n := min(maxTasks, len(groups))
	assigned := make([][]string, n)
	for i, g := range groups {
		assigned[i%n] = append(assigned[i%n], g)
	}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = maps.Clone(c.props)
		out[i][TaskAssignedGroups] = strings.Join(assigned[i], ",")
		out[i][TaskIndex] = strconv.Itoa(i)
	}
	return out, nil
}

func (c *CheckpointConnector) Stop() error {
	if c.g != nil {
		c.g.Stop()
	}
	return nil
}

// CheckpointTask is MirrorCheckpointTask: it reads the offset syncs into an
// mm2.SyncStore (and follows them), loads the checkpoints already written,
// and every emit.checkpoints.interval.seconds translates its groups'
// committed source offsets into checkpoint records for the runtime to
// write; with sync.group.offsets.enabled it commits the checkpoints to the
// target's groups that have no active member, only forward.
type CheckpointTask struct {
	flow   *mirrorconf.Flow
	groups []string
	log    connect.SourceTaskContext
	srcAdm *kadm.Client
	tgtAdm *kadm.Client
	src    *kgo.Client
	tgt    *kgo.Client
	g      *task.Group

	nextEmit, nextSync time.Time

	mu      sync.Mutex
	store   *mm2.SyncStore
	cps     *mm2.Checkpoints
	readErr error
}

var _ connect.SourceTask = (*CheckpointTask)(nil)

func (t *CheckpointTask) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	cc, err := parse(mirrorconf.CheckpointConnector, props)
	if err != nil {
		return err
	}
	if !checkpointsRun(cc) {
		return fmt.Errorf("the connector has no checkpoint work (disabled, or emit.checkpoints and sync.group.offsets both off)")
	}
	t.flow, t.log = cc.Flow, ctx
	t.groups = splitAssigned(props[TaskAssignedGroups])
	t.store, t.cps = mm2.NewSyncStore(), mm2.NewCheckpoints()
	cl := clients{cfg: cc}
	if t.src, err = cl.client(t.flow.Source, "admin"); err != nil {
		return err
	}
	if t.tgt, err = cl.client(t.flow.Target, "admin"); err != nil {
		t.src.Close()
		return err
	}
	t.srcAdm, t.tgtAdm = kadm.NewClient(t.src), kadm.NewClient(t.tgt)
	now := time.Now()
	t.nextEmit, t.nextSync = now.Add(t.flow.EmitCheckpointsInterval), now.Add(t.flow.SyncGroupOffsetsInterval)

	sctx, cancel := context.WithTimeout(context.Background(), t.flow.AdminTimeout)
	defer cancel()
	if err := t.loadCheckpoints(sctx, cl); err != nil {
		// As Kafka's CheckpointStore: without the old checkpoints, the store
		// must read the syncs to the end before translating.
		ctx.Logger().Warn("mirror checkpoint: checkpoints not loaded; translating only after every offset sync is read", "err", err)
		t.store.SetInitializationMustReadToEnd(true)
	} else {
		t.store.SetInitializationMustReadToEnd(false)
	}
	syncs, err := cl.client(offsetSyncsCluster(t.flow), "consumer", kgo.ConsumeTopics(t.flow.OffsetSyncsTopic()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Stop()
		return err
	}
	t.g = task.NewGroup(context.Background())
	t.g.Go(func(gctx context.Context) {
		defer syncs.Close()
		t.followSyncs(gctx, syncs)
	})
	return nil
}

// loadCheckpoints reads the checkpoints topic to its end: the task's
// groups' last checkpoints keep new ones from moving backwards.
func (t *CheckpointTask) loadCheckpoints(ctx context.Context, cl clients) error {
	topic := t.flow.CheckpointsTopic()
	// Committed records only: an exactly-once worker writes checkpoints in
	// transactions.
	ends, err := t.tgtAdm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return err
	}
	todo := pendingEnds(ends)
	if len(todo) == 0 {
		return nil
	}
	c, err := cl.client(t.flow.Target, "consumer", kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer c.Close()
	for idle := 0; len(todo) > 0 && idle < 2; {
		fs, err := pollAWhile(ctx, c)
		if err != nil {
			return err
		}
		if fs.NumRecords() == 0 {
			idle++ // only transaction markers can be left before the end
			continue
		}
		idle = 0
		fs.EachRecord(func(r *kgo.Record) {
			if cp, err := mm2.DecodeCheckpoint(r.Key, r.Value); err == nil && slices.Contains(t.groups, cp.Group) {
				t.cps.Load(cp)
			}
			if r.Offset+1 >= todo[r.Partition] {
				delete(todo, r.Partition)
			}
		})
	}
	return nil
}

// pendingEnds are the partitions with records and their end offsets.
func pendingEnds(ends kadm.ListedOffsets) map[int32]int64 {
	todo := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			todo[o.Partition] = o.Offset
		}
	})
	return todo
}

// pollAWhile polls for half a second at most; the fetch errors are its
// error, a poll that timed out is none.
func pollAWhile(ctx context.Context, c *kgo.Client) (kgo.Fetches, error) {
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	fs := c.PollFetches(pctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ferr error
	fs.EachError(func(topic string, p int32, err error) {
		if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			ferr = fmt.Errorf("read %s[%d]: %w", topic, p, err)
		}
	})
	return fs, ferr
}

// followSyncs reads the offset-syncs topic from its start into the store,
// marks it read when it reached the end offsets it found first, and goes
// on following it.
func (t *CheckpointTask) followSyncs(ctx context.Context, cl *kgo.Client) {
	topic := t.flow.OffsetSyncsTopic()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.fail(fmt.Errorf("end offsets of %s: %w", topic, err))
		return
	}
	todo := pendingEnds(ends)
	loading := true
	loaded := func() {
		t.mu.Lock()
		t.store.ReadToEnd()
		t.mu.Unlock()
		loading = false
	}
	if len(todo) == 0 {
		loaded()
	}
	for idle := 0; ctx.Err() == nil; {
		fs, err := pollAWhile(ctx, cl)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			t.fail(fmt.Errorf("%s: %w", topic, err))
			return
		}
		if fs.NumRecords() == 0 {
			// Only transaction markers can be left before the end.
			if idle++; loading && idle >= 2 {
				loaded()
			}
			continue
		}
		idle = 0
		wasLoading := loading
		t.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			if s, err := mm2.DecodeOffsetSync(r.Key, r.Value); err == nil {
				t.store.Add(s)
			}
			if end, ok := todo[r.Partition]; ok && r.Offset+1 >= end {
				delete(todo, r.Partition)
			}
		})
		t.mu.Unlock()
		if wasLoading && len(todo) == 0 {
			loaded()
		}
	}
}

func (t *CheckpointTask) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.readErr == nil {
		t.readErr = err
	}
}

// Poll waits (a second at most) for the next emit or sync time; at an emit
// it returns the checkpoints due.
func (t *CheckpointTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	t.mu.Lock()
	readErr, ready := t.readErr, t.store.Ready()
	t.mu.Unlock()
	if readErr != nil {
		return nil, readErr
	}
	now := time.Now()
	next := t.nextEmit
	if t.flow.SyncGroupOffsets && t.nextSync.Before(next) {
		next = t.nextSync
	}
	if wait := next.Sub(now); wait > 0 {
		sleep(ctx, min(wait, time.Second))
		return nil, nil
	}
	if !ready {
		sleep(ctx, 100*time.Millisecond)
		return nil, nil
	}
	var out []connect.SourceRecord
	if !now.Before(t.nextEmit) {
		t.nextEmit = now.Add(t.flow.EmitCheckpointsInterval)
		recs, err := t.checkpoints(ctx)
		if err != nil {
			return nil, connect.Retriable(err)
		}
		if t.flow.EmitCheckpoints {
			out = recs
		}
	}
	if t.flow.SyncGroupOffsets && !now.Before(t.nextSync) {
		t.nextSync = now.Add(t.flow.SyncGroupOffsetsInterval)
		if err := t.syncGroupOffsets(ctx); err != nil {
			t.log.Logger().Warn("mirror checkpoint: group offsets not synced", "err", err)
		}
	}
	return out, nil
}

// checkpoints translates the groups' committed offsets of replicated topics.
func (t *CheckpointTask) checkpoints(ctx context.Context) ([]connect.SourceRecord, error) {
	var out []connect.SourceRecord
	now := time.Now()
	for _, g := range t.groups {
		offs, err := t.srcAdm.FetchOffsets(ctx, g)
		if err != nil {
			// As Kafka's: a group that cannot be read is skipped this time.
			t.log.Logger().Warn("mirror checkpoint: group offsets not read", "group", g, "err", err)
			continue
		}
		t.mu.Lock()
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Err != nil || o.At < 0 || !t.flow.Topics.ShouldReplicateTopic(o.Topic) {
				return
			}
			cp, ok := t.cps.Next(g, o.Topic, o.Partition, o.At, o.Metadata, t.store, t.remoteTopic)
			if !ok {
				return
			}
			out = append(out, connect.SourceRecord{
				Record: connect.Record{Topic: t.flow.CheckpointsTopic(), Partition: connect.PartitionOf(0),
					KeySchema: connect.BytesSchema, Key: cp.Key(), ValueSchema: connect.BytesSchema, Value: cp.Value(), Timestamp: now},
				SourcePartition: map[string]any{"group": g, "topic": cp.Topic, "partition": cp.Partition},
				SourceOffset:    map[string]any{offsetKey: int64(0)},
			})
		})
		t.mu.Unlock()
	}
	return out, nil
}

// remoteTopic is MirrorCheckpointTask.renameTopicPartition: a topic that
// came from the target goes back to its name there.
func (t *CheckpointTask) remoteTopic(topic string) string {
	p := t.flow.Policy
	if p.TopicSource(topic) == t.flow.Target {
		return p.OriginalTopic(topic)
	}
	return p.FormatRemoteTopic(t.flow.Source, topic)
}

// syncGroupOffsets commits the last checkpoints to the target's groups
// with no active member (Empty, Dead or unknown), where they move a group
// forward (MirrorCheckpointTask.syncGroupOffset).
func (t *CheckpointTask) syncGroupOffsets(ctx context.Context) error {
	t.mu.Lock()
	byGroup := map[string][]mm2.Checkpoint{}
	for _, cp := range t.cps.All() {
		byGroup[cp.Group] = append(byGroup[cp.Group], cp)
	}
	t.mu.Unlock()
	if len(byGroup) == 0 {
		return nil
	}
	groups := slices.Sorted(maps.Keys(byGroup))
	described, err := t.tgtAdm.DescribeGroups(ctx, groups...)
	if err != nil && !errors.Is(err, kadm.ErrEmpty) {
		return fmt.Errorf("describe %s's groups: %w", t.flow.Target, err)
	}
	for _, g := range groups {
		if d, ok := described[g]; ok && d.Err == nil && d.State != "" && d.State != "Empty" && d.State != "Dead" {
			continue // active on the target: its consumers own its offsets
		}
		have, err := t.tgtAdm.FetchOffsets(ctx, g)
		if err != nil {
			return fmt.Errorf("fetch %s's offsets of %s: %w", t.flow.Target, g, err)
		}
		commit := kadm.Offsets{}
		for _, cp := range byGroup[g] {
			if cur, ok := have.Lookup(cp.Topic, cp.Partition); ok && cur.Err == nil && cur.At >= cp.DownstreamOffset {
				continue
			}
			commit.Add(kadm.Offset{Topic: cp.Topic, Partition: cp.Partition, At: cp.DownstreamOffset, LeaderEpoch: -1, Metadata: cp.Metadata})
		}
		if len(commit) == 0 {
			continue
		}
		resp, err := t.tgtAdm.CommitOffsets(ctx, g, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			// A member joined since the describe: its consumers own the group now.
			t.log.Logger().Warn("mirror checkpoint: group offsets not synced", "group", g, "err", err)
		}
	}
	return nil
}

func (t *CheckpointTask) Stop() error {
	if t.g != nil {
		t.g.Stop()
	}
	if t.src != nil {
		t.src.Close()
	}
	if t.tgt != nil {
		t.tgt.Close()
	}
	return nil
}
