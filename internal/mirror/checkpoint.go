package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// runCheckpoints is MirrorMaker 2's checkpoint task: it reads the offset
// syncs, translates the source's consumer group offsets into the target's
// offsets, writes them as checkpoints to <source>.checkpoints.internal on
// the target, and, with sync.group.offsets.enabled, commits them to the
// target's groups that have no active member, never moving one backwards.
// Offset-preserving flows need no syncs: a source offset is its target
// offset, capped at what the mirror has copied.
func (fl *flow) runCheckpoints(ctx context.Context) error {
	src, err := fl.roleClient(fl.cfg.Source, roleAdmin)
	if err != nil {
		return err
	}
	defer src.Close()
	tgt, err := fl.roleClient(fl.cfg.Target, roleProducer, kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	defer tgt.Close()
	ck := &checkpointer{fl: fl, srcAdm: kadm.NewClient(src), tgt: tgt, tgtAdm: kadm.NewClient(tgt),
		store: mm2.NewSyncStore(), cps: mm2.NewCheckpoints(), latest: map[string]map[tp]mm2.Checkpoint{}}

	if fl.cfg.EmitCheckpoints {
		err := fl.readTopic(ctx, fl.cfg.Target, fl.checkpointsTopic(), func(r *kgo.Record) {
			if cp, err := mm2.DecodeCheckpoint(r.Key, r.Value); err == nil {
				ck.cps.Load(cp)
				ck.remember(cp)
			}
		})
		if err != nil {
			return err
		}
		// With the checkpoints loaded they keep a checkpoint from moving
		// backwards, so the syncs' history may be kept while loading.
		ck.store.SetInitializationMustReadToEnd(false)
	}
	if !fl.cfg.OffsetPreserving {
		ready := make(chan error, 1)
		sctx, stop := context.WithCancel(ctx)
		followed := make(chan struct{})
		// Stopped and waited for when the checkpointer returns.
		defer func() { stop(); <-followed }()
		go func() {
			defer close(followed)
			ck.followSyncs(sctx, ready)
		}()
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
	emit := tickerOrNil(true, fl.cfg.EmitCheckpointsInterval)
	if emit == nil {
		emit = time.NewTicker(time.Minute)
	}
	defer emit.Stop()
	syncT := tickerOrNil(fl.cfg.SyncGroupOffsets, fl.cfg.SyncGroupOffsetsInterval)
	defer stopTicker(syncT)
	refresh := tickerOrNil(fl.cfg.RefreshGroups, fl.cfg.RefreshGroupsInterval)
	defer stopTicker(refresh)
	if err := ck.refreshGroups(ctx); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tickC(refresh):
			if err := ck.refreshGroups(ctx); err != nil {
				return err
			}
		case <-emit.C:
			if err := ck.emit(ctx); err != nil {
				return err
			}
		case <-tickC(syncT):
			if err := ck.syncGroups(ctx); err != nil {
				return err
			}
		}
		if e := ck.syncErr(); e != nil {
			return e
		}
	}
}

type checkpointer struct {
	fl             *flow
	srcAdm, tgtAdm *kadm.Client
	tgt            *kgo.Client

	mu      sync.Mutex
	store   *mm2.SyncStore
	cps     *mm2.Checkpoints
	latest  map[string]map[tp]mm2.Checkpoint // group -> remote partition -> last checkpoint
	groups  []string                         // the source's groups the filter passes, as last listed
	readErr error
}

func (ck *checkpointer) remember(cp mm2.Checkpoint) {
	m := ck.latest[cp.Group]
	if m == nil {
		m = map[tp]mm2.Checkpoint{}
		ck.latest[cp.Group] = m
	}
	m[tp{cp.Topic, cp.Partition}] = cp
}

func (ck *checkpointer) syncErr() error {
	ck.mu.Lock()
	defer ck.mu.Unlock()
	return ck.readErr
}

// followSyncs reads the offset-syncs topic from its start into the store,
// says on ready when it has read what was there when it began (the store
// translates from then on), and goes on following it with the same
// consumer, so no sync written meanwhile is missed.
func (ck *checkpointer) followSyncs(ctx context.Context, ready chan<- error) {
	fl := ck.fl
	cluster, topic := fl.offsetSyncsCluster(), fl.offsetSyncsTopic()
	cl, err := fl.client(cluster, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		ready <- err
		return
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		ready <- fmt.Errorf("end offsets of %s on %s: %w", topic, cluster, err)
		return
	}
	todo := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			todo[o.Partition] = o.Offset
		}
	})
	loading, idle := true, 0
	done := func() {
		ck.mu.Lock()
		ck.store.ReadToEnd()
		ck.mu.Unlock()
		loading = false
		ready <- nil
	}
	if len(todo) == 0 {
		done()
	}
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		var ferr error
		fs.EachError(func(t string, p int32, e error) {
			if ctx.Err() == nil && !errors.Is(e, context.DeadlineExceeded) && ferr == nil {
				ferr = fmt.Errorf("read %s[%d] on %s: %w", t, p, cluster, e)
			}
		})
		if ferr != nil {
			if loading {
				ready <- ferr
			} else {
				ck.fail(ferr)
			}
			return
		}
		if fs.NumRecords() == 0 && loading {
			// Only transaction markers can be left before the end.
			if idle++; idle >= 2 {
				done()
			}
			continue
		}
		ck.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			if s, err := mm2.DecodeOffsetSync(r.Key, r.Value); err == nil {
				ck.store.Add(s)
			}
			if end, ok := todo[r.Partition]; ok && r.Offset+1 >= end {
				delete(todo, r.Partition)
			}
		})
		ck.mu.Unlock()
		if loading && len(todo) == 0 {
			done()
		}
	}
}

func (ck *checkpointer) fail(err error) {
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ck.readErr == nil {
		ck.readErr = err
	}
}

// refreshGroups lists the source's groups the group filter passes
// (refresh.groups.interval.seconds; once at start when refresh.groups is
// off), as MirrorCheckpointConnector does.
func (ck *checkpointer) refreshGroups(ctx context.Context) error {
	fl := ck.fl
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	listed, err := ck.srcAdm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list %s's groups: %w", fl.cfg.Source, err)
	}
	var groups []string
	for _, g := range listed.Groups() {
		if fl.cfg.Groups.ShouldReplicateGroup(g) {
			groups = append(groups, g)
		}
	}
	sort.Strings(groups)
	ck.groups = groups
	return nil
}

// emit writes a checkpoint for every replicated group's committed offset
// of a mirrored partition that translates.
func (ck *checkpointer) emit(ctx context.Context) error {
	fl := ck.fl
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	topics := fl.mirrored()
	var recs []*kgo.Record
	for _, g := range ck.groups {
		offs, err := ck.srcAdm.FetchOffsets(ctx, g)
		if err != nil {
			fl.log.Warn("mirror: group offsets not read", "group", g, "err", err)
			continue
		}
		var cps []mm2.Checkpoint
		offs.Each(func(o kadm.OffsetResponse) {
			n, ok := topics[o.Topic]
			if !ok || o.Partition >= n || o.Err != nil || o.At < 0 {
				return
			}
			if cp, ok := ck.next(g, o.Topic, o.Partition, o.At, o.Metadata); ok {
				cps = append(cps, cp)
			}
		})
		ck.mu.Lock()
		for _, cp := range cps {
			ck.remember(cp)
		}
		ck.mu.Unlock()
		if fl.cfg.EmitCheckpoints {
			for _, cp := range cps {
				recs = append(recs, &kgo.Record{Topic: fl.checkpointsTopic(), Key: cp.Key(), Value: cp.Value()})
			}
		}
	}
	if len(recs) == 0 {
		return nil
	}
	if err := ck.tgt.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("write checkpoints to %s: %w", fl.cfg.Target, err)
	}
	fl.checkpoints.Add(int64(len(recs)))
	return nil
}

// next is one partition's checkpoint, or false when none is due.
func (ck *checkpointer) next(group, topic string, partition int32, upstream int64, metadata string) (mm2.Checkpoint, bool) {
	fl := ck.fl
	remote := fl.remote(topic)
	if fl.cfg.OffsetPreserving {
		// The same offset, but never past what the mirror holds: a consumer
		// moved there reads the rest as the mirror copies it.
		down := upstream
		if s := fl.state(topic, partition); s.next < down {
			down = s.next
		}
		ck.mu.Lock()
		defer ck.mu.Unlock()
		if last, ok := ck.latest[group][tp{remote, partition}]; ok &&
			last.UpstreamOffset == upstream && last.DownstreamOffset == down {
			return mm2.Checkpoint{}, false
		}
		if last, ok := ck.latest[group][tp{remote, partition}]; ok && down < last.DownstreamOffset && upstream >= last.UpstreamOffset {
			return mm2.Checkpoint{}, false
		}
		return mm2.Checkpoint{Group: group, Topic: remote, Partition: partition, UpstreamOffset: upstream, DownstreamOffset: down, Metadata: metadata}, true
	}
	ck.mu.Lock()
	defer ck.mu.Unlock()
	return ck.cps.Next(group, topic, partition, upstream, metadata, ck.store, fl.remote)
}

// syncGroups commits the checkpoints to the target's groups that have no
// active member there, only where they move a group forward.
func (ck *checkpointer) syncGroups(ctx context.Context) error {
	fl := ck.fl
	ctx, cancel := fl.adminCtx(ctx)
	defer cancel()
	ck.mu.Lock()
	groups := sortedKeys(ck.latest)
	ck.mu.Unlock()
	if len(groups) == 0 {
		return nil
	}
	described, err := ck.tgtAdm.DescribeGroups(ctx, groups...)
	if err != nil && !errors.Is(err, kadm.ErrEmpty) {
		return fmt.Errorf("describe %s's groups: %w", fl.cfg.Target, err)
	}
	for _, g := range groups {
		if d, ok := described[g]; ok && d.Err == nil && d.State != "" && d.State != "Empty" && d.State != "Dead" {
			continue // active on the target: its consumers own its offsets
		}
		have, err := ck.tgtAdm.FetchOffsets(ctx, g)
		if err != nil {
			fl.log.Warn("mirror: target group offsets not read", "group", g, "err", err)
			continue
		}
		ck.mu.Lock()
		cps := make([]mm2.Checkpoint, 0, len(ck.latest[g]))
		for _, cp := range ck.latest[g] {
			cps = append(cps, cp)
		}
		ck.mu.Unlock()
		sort.Slice(cps, func(i, j int) bool {
			if cps[i].Topic != cps[j].Topic {
				return cps[i].Topic < cps[j].Topic
			}
			return cps[i].Partition < cps[j].Partition
		})
		commit := kadm.Offsets{}
		for _, cp := range cps {
			if cur, ok := have.Lookup(cp.Topic, cp.Partition); ok && cur.Err == nil && cur.At >= cp.DownstreamOffset {
				continue
			}
			commit.Add(kadm.Offset{Topic: cp.Topic, Partition: cp.Partition, At: cp.DownstreamOffset, LeaderEpoch: -1, Metadata: cp.Metadata})
		}
		if len(commit) == 0 {
			continue
		}
		resp, err := ck.tgtAdm.CommitOffsets(ctx, g, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			// A member joined since the describe: its consumers own the group now.
			fl.log.Warn("mirror: group offsets not synced", "group", g, "err", err)
			continue
		}
		fl.groupSyncs.Add(int64(len(commit)))
	}
	return nil
}
