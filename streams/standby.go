package streams

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/streams/internal/assign"
	"github.com/samsa-io/samsa/streams/state"
)

// Standby tasks (num.standby.replicas): a thread keeps copies of other
// instances' task state by reading their changelogs into its own stores,
// without processing, so that when such a task moves here it restores only
// the changelog's tail from its checkpoint instead of the whole changelog
// (Kafka's StandbyTask). The group's assignor puts standbys on instances
// other than the active one; they are read by a client of their own,
// remade whenever the set changes (rebalances are rare), and polled
// between the active tasks' rounds of the same loop, so the stores have
// one writer.

// onAssignment receives the assignor's user data for this member.
func (th *streamThread) onAssignment(ud assign.MemberUserData) {
	th.app.query.setHosts(ud.ActiveHosts)
	th.mu.Lock()
	defer th.mu.Unlock()
	th.standbyWant = map[TaskID]bool{}
	for _, id := range ud.Standby {
		th.standbyWant[TaskID{Subtopology: id.Subtopology, Partition: id.Partition}] = true
	}
}

// syncStandbys makes the standby tasks match the assignment; active tasks
// were settled first, so a standby that became active is already closed.
func (th *streamThread) syncStandbys(ctx context.Context, want map[TaskID]bool) error {
	changed := false
	for id := range th.standbys {
		if !want[id] || th.tasks[id] != nil {
			th.closeStandby(id)
			changed = true
		}
	}
	for id := range want {
		if th.standbys[id] != nil || th.tasks[id] != nil {
			continue
		}
		if err := th.openStandby(id); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		return th.remakeStandbyClient()
	}
	return nil
}

// openStandby opens a standby task's logged stores in its directory and
// notes, from the checkpoint, where each changelog is to be read from.
func (th *streamThread) openStandby(id TaskID) error {
	var st *subtopology
	for _, s := range th.app.bt.subtopologies {
		if s.id == id.Subtopology {
			st = s
		}
	}
	if st == nil {
		return fmt.Errorf("streams: standby task %s of no subtopology", id)
	}
	ts := &taskStores{}
	if th.app.stateDir != nil && th.app.persistent {
		dir, err := th.app.stateDir.LockTask(id.String())
		if err != nil {
			return fmt.Errorf("streams: standby task %s: %w", id, err)
		}
		ts.dir = dir
	}
	checkpoint := map[state.TopicPartition]int64{}
	if ts.dir != nil {
		cp, err := state.ReadCheckpoint(ts.dir.CheckpointPath())
		if err == nil {
			checkpoint = cp
		} else if !errors.Is(err, os.ErrNotExist) {
			th.log.Warn("unreadable checkpoint of a standby task; reading its changelogs from the start", "task", id.String(), "error", err)
		}
	}
	for _, name := range st.stores {
		def := th.app.topo.stores[name]
		if !def.logging || def.global {
			continue
		}
		_, h, err := openStateStore(nil, def, ts.dir, th.app.blockCache, func([]byte, []byte, int64) {})
		if err != nil {
			return err
		}
		if h == nil || h.restorer == nil {
			continue // a kind kept in memory: nothing to keep warm
		}
		h.changelog = topicPartition{changelogName(th.app.cfg.ApplicationID, name), id.Partition}
		ts.handles = append(ts.handles, h)
		if off, ok := checkpoint[state.TopicPartition{Topic: h.changelog.topic, Partition: h.changelog.partition}]; ok && h.store.Persistent() {
			th.setChangelogEnd(h.changelog, off)
		}
	}
	th.standbys[id] = ts
	th.log.Info("standby task created", "task", id.String())
	return nil
}

// closeStandby commits, checkpoints and closes a standby task's stores.
func (th *streamThread) closeStandby(id TaskID) {
	ts := th.standbys[id]
	for _, h := range ts.handles {
		if err := h.store.Commit(); err != nil {
			th.log.Warn("commit standby store", "task", id.String(), "store", h.def.name, "error", err)
		}
	}
	th.stores[id] = ts
	if err := th.checkpoint(id); err != nil {
		th.log.Warn("checkpoint standby task", "task", id.String(), "error", err)
	}
	th.closeStores(id)
	delete(th.standbys, id)
	th.log.Info("standby task closed", "task", id.String())
}

// remakeStandbyClient reads every standby changelog partition from where
// its store is.
func (th *streamThread) remakeStandbyClient() error {
	if th.standbyClient != nil {
		th.standbyClient.Close()
		th.standbyClient = nil
	}
	th.standbyHandles = map[topicPartition]*storeHandle{}
	parts := map[string]map[int32]kgo.Offset{}
	for _, ts := range th.standbys {
		for _, h := range ts.handles {
			th.standbyHandles[h.changelog] = h
			if parts[h.changelog.topic] == nil {
				parts[h.changelog.topic] = map[int32]kgo.Offset{}
			}
			th.produceMu.Lock()
			off, ok := th.changelogs[h.changelog]
			th.produceMu.Unlock()
			o := kgo.NewOffset().AtStart()
			if ok {
				o = kgo.NewOffset().At(off)
			}
			parts[h.changelog.topic][h.changelog.partition] = o
		}
	}
	if len(parts) == 0 {
		return nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(th.app.cfg.BootstrapServers...), kgo.ConsumePartitions(parts),
		kgo.ClientID(fmt.Sprintf("%s-StreamThread-%d-standby", th.app.cfg.ApplicationID, th.id))}
	if th.eos {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	opts = append(opts, th.app.cfg.ClientOptions...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("streams: standby client: %w", err)
	}
	th.standbyClient = cl
	return nil
}

// updateStandbys applies what the standby client has fetched, without
// waiting for more.
func (th *streamThread) updateStandbys(ctx context.Context) error {
	if th.standbyClient == nil {
		return nil
	}
	// kgo returns nothing for a context already done, so give it a
	// millisecond: what is buffered comes back at once.
	pollCtx, cancel := context.WithTimeout(ctx, time.Millisecond)
	fs := th.standbyClient.PollFetches(pollCtx)
	cancel()
	var err error
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if err != nil || len(fp.Records) == 0 {
			return
		}
		tp := topicPartition{fp.Topic, fp.Partition}
		h := th.standbyHandles[tp]
		if h == nil {
			return
		}
		batch := make([]state.ChangelogRecord, 0, len(fp.Records))
		for _, r := range fp.Records {
			batch = append(batch, state.ChangelogRecord{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()})
		}
		if err = h.restorer.RestoreBatch(batch); err != nil {
			err = fmt.Errorf("streams: standby %s: %w", tp, err)
			return
		}
		th.setChangelogEnd(tp, fp.Records[len(fp.Records)-1].Offset+1)
		th.app.mets.standbyRecords.Add(float64(len(batch)))
	})
	return err
}

// commitStandbys makes the standby stores durable and checkpoints them.
func (th *streamThread) commitStandbys() error {
	ids := make([]TaskID, 0, len(th.standbys))
	for id := range th.standbys {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		ts := th.standbys[id]
		for _, h := range ts.handles {
			if err := h.store.Commit(); err != nil {
				return fmt.Errorf("streams: standby %s: commit %s: %w", id, h.def.name, err)
			}
		}
		th.stores[id] = ts
		err := th.checkpoint(id)
		delete(th.stores, id)
		if err != nil {
			return err
		}
	}
	return nil
}

// standbyTasks lists the thread's standby tasks for its subscription.
func (th *streamThread) standbyTasks() []assign.TaskID {
	out := make([]assign.TaskID, 0, len(th.standbys))
	for id := range th.standbys {
		out = append(out, assign.TaskID{Subtopology: id.Subtopology, Partition: id.Partition})
	}
	return out
}
