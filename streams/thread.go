package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/streams/internal/assign"
	"github.com/samsa-io/samsa/streams/state"
)

// streamThread is one member of the application's group: a client that
// consumes the partitions of its active tasks and produces their output,
// and the loop that feeds the tasks, commits and punctuates (Kafka's
// StreamThread). Everything here runs on the thread's goroutine, except
// the group callbacks, which kgo runs only while the loop waits in a poll
// (BlockRebalanceOnPoll) and which only queue assignment changes.
type streamThread struct {
	app  *App
	id   int
	log  *slog.Logger
	cl   *kgo.Client
	adm  *kadm.Client
	eos  bool
	sess *kgo.GroupTransactSession

	mu       sync.Mutex
	assigned map[topicPartition]bool // as the group says; tasks follow in the loop
	lost     bool
	// prevActive are the tasks the thread ran, for its next subscription.
	prevActive []assign.TaskID

	tasks      map[TaskID]*task
	byPart     map[topicPartition]*task
	fetchPos   map[topicPartition]int64
	lastEnds   time.Time
	lastCommit time.Time
	inTxn      bool

	produceMu  sync.Mutex
	produceErr error
	changelogs map[topicPartition]int64 // the offset after the last record written, per changelog partition
	stores     map[TaskID]*taskStores
	// recordCache is the thread's share of statestore.cache.max.bytes (nil
	// when 0: every update goes downstream at once).
	recordCache *state.Cache

	// standbyWant is the assignor's standby set (set in the balancer's
	// callback, under mu); standbys are the standby tasks kept, read by
	// standbyClient.
	standbyWant    map[TaskID]bool
	standbys       map[TaskID]*taskStores
	standbyClient  *kgo.Client
	standbyHandles map[topicPartition]*storeHandle
	// prevStandby are the standby tasks, for the next subscription.
	prevStandby []assign.TaskID
}

func newStreamThread(a *App, id int) (*streamThread, error) {
	th := &streamThread{app: a, id: id, eos: a.cfg.ProcessingGuarantee == ExactlyOnceV2,
		log:      a.log.With("thread", id),
		assigned: map[topicPartition]bool{}, tasks: map[TaskID]*task{}, byPart: map[topicPartition]*task{},
		fetchPos: map[topicPartition]int64{}, changelogs: map[topicPartition]int64{}, stores: map[TaskID]*taskStores{}, standbys: map[TaskID]*taskStores{}}
	var topics []string
	for _, st := range a.bt.subtopologies {
		for topic := range st.topics {
			topics = append(topics, a.resolveTopic(topic))
		}
	}
	sort.Strings(topics)
	reset := kgo.NewOffset().AtStart()
	if a.cfg.AutoOffsetReset == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	bal, err := assign.NewBalancer(assign.Config{
		ProcessID: a.processID, Endpoint: a.cfg.ApplicationServer, PrevTasks: th.prevTasks,
		Source: taskSource{a}, NumStandbyReplicas: a.cfg.NumStandbyReplicas, Logger: th.log, OnAssignment: th.onAssignment,
	})
	if err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(a.cfg.BootstrapServers...),
		kgo.ConsumerGroup(a.cfg.ApplicationID),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(reset),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.Balancers(bal),
		kgo.OnPartitionsAssigned(th.onAssigned),
		kgo.OnPartitionsRevoked(th.onRevoked),
		kgo.OnPartitionsLost(th.onLost),
		kgo.ClientID(fmt.Sprintf("%s-StreamThread-%d", a.cfg.ApplicationID, id)),
		kgo.RecordPartitioner(taskPartitioner{kgo.StickyKeyPartitioner(nil)}),
		kgo.ProducerLinger(5 * time.Millisecond),
	}
	if th.eos {
		opts = append(opts,
			// Kafka Streams' EOS v2 transactional.id: one per thread of each
			// process; zombies are fenced by the group generation their
			// offsets commit carries (KIP-447), not by the ID.
			kgo.TransactionalID(fmt.Sprintf("%s-%s-%d", a.cfg.ApplicationID, a.processID, id)),
			// A killed instance's open transaction holds back read_committed
			// readers until it times out: Kafka Streams sets 10 s.
			kgo.TransactionTimeout(10*time.Second),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RequireStableFetchOffsets())
	}
	opts = append(opts, a.cfg.ClientOptions...)
	if th.eos {
		th.sess, err = kgo.NewGroupTransactSession(opts...)
		if err == nil {
			th.cl = th.sess.Client()
		}
	} else {
		th.cl, err = kgo.NewClient(opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("streams: thread %d: %w", id, err)
	}
	th.adm = kadm.NewClient(th.cl)
	if n := *a.cfg.CacheMaxBytes / int64(a.cfg.NumStreamThreads); n > 0 {
		if th.recordCache, err = state.NewCache(n); err != nil {
			return nil, fmt.Errorf("streams: %w", err)
		}
	}
	return th, nil
}

// The group callbacks record what changed; the loop acts on it. A revoke
// commits first (the loop is parked in a poll, so nothing is processing).
func (th *streamThread) onAssigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	th.mu.Lock()
	defer th.mu.Unlock()
	for topic, ps := range m {
		for _, p := range ps {
			th.assigned[topicPartition{topic, p}] = true
		}
	}
}

func (th *streamThread) onRevoked(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
	if !th.eos {
		if err := th.commit(ctx); err != nil {
			th.log.Warn("commit before a revocation failed; the next owner reprocesses from the last commit", "error", err)
		}
	}
	th.mu.Lock()
	defer th.mu.Unlock()
	for topic, ps := range m {
		for _, p := range ps {
			delete(th.assigned, topicPartition{topic, p})
		}
	}
}

func (th *streamThread) onLost(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	th.mu.Lock()
	defer th.mu.Unlock()
	for topic, ps := range m {
		for _, p := range ps {
			delete(th.assigned, topicPartition{topic, p})
		}
	}
	th.lost = true
}

func (th *streamThread) run(ctx context.Context) error {
	defer th.shutdown()
	for ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, th.app.cfg.PollInterval)
		var fetches kgo.Fetches
		if th.eos {
			fetches = th.sess.PollRecords(pollCtx, 1000)
		} else {
			fetches = th.cl.PollRecords(pollCtx, 1000)
		}
		cancel()
		err := th.step(ctx, fetches)
		if th.eos {
			th.sess.AllowRebalance()
		} else {
			th.cl.AllowRebalance()
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// step handles one poll's worth: assignment changes, the fetched records,
// processing, punctuation, commits.
func (th *streamThread) step(ctx context.Context, fetches kgo.Fetches) error {
	if fetches.IsClientClosed() {
		return context.Canceled
	}
	var fatal error
	fetches.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		th.log.Warn("fetch error", "topic", topic, "partition", p, "error", err)
	})
	if err := th.syncTasks(ctx); err != nil {
		return err
	}
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		if fatal != nil || len(fp.Records) == 0 {
			return
		}
		tp := topicPartition{fp.Topic, fp.Partition}
		t := th.byPart[tp]
		if t == nil {
			return
		}
		in := make([]inRecord, 0, len(fp.Records))
		for _, r := range fp.Records {
			in = append(in, inRecord{offset: r.Offset, key: r.Key, value: r.Value, timestamp: r.Timestamp.UnixMilli(), headers: headersOf(r.Headers)})
		}
		last := fp.Records[len(fp.Records)-1].Offset
		th.fetchPos[tp] = last + 1
		end := fp.HighWatermark
		if th.eos {
			end = fp.LastStableOffset
		}
		lag := end - (last + 1)
		if lag < 0 {
			lag = 0
		}
		if err := t.addRecords(tp, in, lag); err != nil {
			fatal = err
		}
	})
	if fatal != nil {
		return fatal
	}
	if err := th.refreshLags(ctx); err != nil {
		th.log.Debug("end offsets", "error", err)
	}
	if th.eos && !th.inTxn && len(th.tasks) > 0 {
		if err := th.sess.Begin(); err != nil {
			return fmt.Errorf("streams: begin transaction: %w", err)
		}
		th.inTxn = true
	}
	now := time.Now().UnixMilli()
	for _, t := range th.sortedTasks() {
		if _, err := t.process(1000); err != nil {
			return err
		}
		if err := t.punctuate(WallClockTime, now); err != nil {
			return err
		}
	}
	if err := th.takeProduceErr(); err != nil {
		return err
	}
	if err := th.updateStandbys(ctx); err != nil {
		return err
	}
	due := time.Since(th.lastCommit) >= th.app.cfg.CommitInterval
	for _, t := range th.tasks {
		if t.commitRequested {
			due = true
		}
	}
	if due {
		return th.commit(ctx)
	}
	return nil
}

func headersOf(hs []kgo.RecordHeader) []Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]Header, len(hs))
	for i, h := range hs {
		out[i] = Header{Key: h.Key, Value: h.Value}
	}
	return out
}

func (th *streamThread) sortedTasks() []*task {
	out := make([]*task, 0, len(th.tasks))
	for _, t := range th.tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].id, out[j].id
		return a.Subtopology < b.Subtopology || a.Subtopology == b.Subtopology && a.Partition < b.Partition
	})
	return out
}

// refreshLags learns, at most once per poll interval, how far behind the
// log end each empty partition of a waiting task is, so that a task waits
// only for data that exists (Kafka's max.task.idle.ms rules).
func (th *streamThread) refreshLags(ctx context.Context) error {
	var unknown []topicPartition
	for _, t := range th.tasks {
		for _, q := range t.order {
			if q.empty() && q.lag != 0 {
				unknown = append(unknown, q.tp)
			}
		}
	}
	if len(unknown) == 0 || time.Since(th.lastEnds) < th.app.cfg.PollInterval {
		return nil
	}
	th.lastEnds = time.Now()
	var topics []string
	for _, tp := range unknown {
		topics = append(topics, tp.topic)
	}
	ends, err := th.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	if th.eos {
		// The last stable offset is what a read_committed consumer can reach.
		ends, err = th.adm.ListCommittedOffsets(ctx, topics...)
		if err != nil {
			return err
		}
	}
	committed, err := th.adm.FetchOffsets(ctx, th.app.cfg.ApplicationID)
	if err != nil {
		return err
	}
	for _, tp := range unknown {
		end, ok := ends.Lookup(tp.topic, tp.partition)
		if !ok || end.Err != nil {
			continue
		}
		pos, seen := th.fetchPos[tp]
		if !seen {
			if c, ok := committed.Lookup(tp.topic, tp.partition); ok && c.Err == nil && c.At >= 0 {
				pos = c.At
			} else if th.app.cfg.AutoOffsetReset == "latest" {
				pos = end.Offset
			} else {
				starts, err := th.adm.ListStartOffsets(ctx, tp.topic)
				if err != nil {
					continue
				}
				s, _ := starts.Lookup(tp.topic, tp.partition)
				pos = s.Offset
			}
		}
		lag := end.Offset - pos
		if lag < 0 {
			lag = 0
		}
		th.byPart[tp].queues[tp].lag = lag
	}
	return nil
}

// syncTasks makes the tasks match the assignment: new tasks are created and
// restored, tasks whose partitions went are closed (committed first by the
// revoke callback; dropped unflushed when the partitions were lost).
func (th *streamThread) syncTasks(ctx context.Context) error {
	th.mu.Lock()
	want := map[TaskID][]topicPartition{}
	for tp := range th.assigned {
		st := th.subtopologyOf(tp.topic)
		if st == nil {
			continue
		}
		id := TaskID{st.id, tp.partition}
		want[id] = append(want[id], tp)
	}
	th.lost = false
	standbyWant := map[TaskID]bool{}
	for id := range th.standbyWant {
		standbyWant[id] = true
	}
	th.mu.Unlock()
	for id, t := range th.tasks {
		if _, keep := want[id]; !keep {
			th.closeTask(t)
		}
	}
	for id := range want {
		if th.standbys[id] != nil {
			// A standby becoming active: close it (checkpointed) so the
			// active task restores only the changelog's tail.
			th.closeStandby(id)
			if err := th.remakeStandbyClient(); err != nil {
				return err
			}
		}
	}
	for id, parts := range want {
		if _, have := th.tasks[id]; have {
			continue
		}
		if err := th.createTask(ctx, id, parts); err != nil {
			return err
		}
	}
	if err := th.syncStandbys(ctx, standbyWant); err != nil {
		return err
	}
	th.mu.Lock()
	th.prevStandby = th.standbyTasks()
	th.prevActive = th.prevActive[:0]
	for id := range th.tasks {
		th.prevActive = append(th.prevActive, assign.TaskID{Subtopology: id.Subtopology, Partition: id.Partition})
	}
	th.mu.Unlock()
	th.app.setState(Running)
	return nil
}

func (th *streamThread) subtopologyOf(topic string) *subtopology {
	for _, st := range th.app.bt.subtopologies {
		for name := range st.topics {
			if th.app.resolveTopic(name) == topic {
				return st
			}
		}
	}
	return nil
}

func (th *streamThread) createTask(ctx context.Context, id TaskID, parts []topicPartition) error {
	var st *subtopology
	for _, s := range th.app.bt.subtopologies {
		if s.id == id.Subtopology {
			st = s
		}
	}
	resolved := &subtopology{id: st.id, nodes: st.nodes, sources: st.sources, topics: map[string]*node{}, stores: st.stores}
	for name, n := range st.topics {
		resolved.topics[th.app.resolveTopic(name)] = n
	}
	t, err := newTask(id, th.app.topo, resolved, &threadEnv{th: th}, parts, &taskConfig{
		maxTaskIdleMs: th.app.cfg.MaxTaskIdle.Milliseconds(), deserializationHandler: th.app.cfg.DeserializationHandler})
	if err != nil {
		return err
	}
	if g := th.app.global; g != nil {
		t.addGlobalStores(g.stores)
	}
	if err := t.open(); err != nil {
		return err
	}
	if err := th.restore(ctx, t); err != nil {
		return err
	}
	th.tasks[id] = t
	for _, h := range th.taskState(id).handles {
		th.app.query.add(id, h)
	}
	for _, tp := range parts {
		th.byPart[tp] = t
	}
	th.log.Info("task created", "task", id.String(), "partitions", fmt.Sprint(parts))
	return nil
}

func (th *streamThread) closeTask(t *task) {
	if err := t.close(); err != nil {
		th.log.Warn("closing a task", "task", t.id.String(), "error", err)
	}
	for _, h := range th.taskState(t.id).handles {
		th.app.query.remove(t.id, h.def.name)
	}
	th.closeStores(t.id)
	for tp := range t.queues {
		delete(th.byPart, tp)
		delete(th.fetchPos, tp)
	}
	delete(th.tasks, t.id)
	th.log.Info("task closed", "task", t.id.String())
}

// commit makes what the tasks processed durable: at least once, the
// producer is flushed, then the offsets committed; exactly once, the
// transaction with the offsets in it commits.
func (th *streamThread) commit(ctx context.Context) error {
	th.lastCommit = time.Now()
	th.updateGauges()
	if err := th.flushCaches(); err != nil {
		return err
	}
	if err := th.commitStandbys(); err != nil {
		return err
	}
	offsets := map[string]map[int32]kgo.EpochOffset{}
	for _, t := range th.tasks {
		t.commitRequested = false
		for tp, off := range t.consumed {
			if offsets[tp.topic] == nil {
				offsets[tp.topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: off}
		}
	}
	if th.eos {
		if !th.inTxn {
			return nil
		}
		th.inTxn = false
		commitCtx := kgo.PreTxnCommitFnContext(ctx, func(req *kmsgTxnOffsetCommit) error {
			return rewriteTxnOffsets(req, offsets)
		})
		committed, err := th.sess.End(commitCtx, kgo.TryCommit)
		if err != nil {
			return fmt.Errorf("streams: end transaction: %w", err)
		}
		if !committed {
			th.abortStores()
			return th.abortTasks(ctx)
		}
		if err := th.takeProduceErr(); err != nil {
			return err
		}
		return th.commitStores()
	}
	if err := th.cl.Flush(ctx); err != nil {
		return fmt.Errorf("streams: flush: %w", err)
	}
	if err := th.takeProduceErr(); err != nil {
		return err
	}
	if err := th.commitStores(); err != nil {
		return err
	}
	if len(offsets) == 0 {
		return nil
	}
	var commitErr error
	th.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsgOffsetCommitReq, resp *kmsgOffsetCommitResp, err error) {
		if err != nil {
			commitErr = err
			return
		}
		commitErr = offsetCommitErr(resp)
	})
	if commitErr != nil {
		return fmt.Errorf("streams: commit offsets: %w", commitErr)
	}
	return nil
}

// abortTasks rebuilds every task from its committed state after an aborted
// transaction: the stores restart from their changelogs (read committed)
// and the consumer from the committed offsets.
func (th *streamThread) abortTasks(ctx context.Context) error {
	th.log.Info("transaction aborted; restoring tasks from the last commit")
	type recreate struct {
		id    TaskID
		parts []topicPartition
	}
	var again []recreate
	for id, t := range th.tasks {
		var parts []topicPartition
		for tp := range t.queues {
			parts = append(parts, tp)
		}
		again = append(again, recreate{id, parts})
		th.closeTask(t)
	}
	committed, err := th.adm.FetchOffsets(ctx, th.app.cfg.ApplicationID)
	if err != nil {
		return fmt.Errorf("streams: fetch committed offsets after an abort: %w", err)
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	for _, r := range again {
		for _, tp := range r.parts {
			if c, ok := committed.Lookup(tp.topic, tp.partition); ok && c.Err == nil && c.At >= 0 {
				if set[tp.topic] == nil {
					set[tp.topic] = map[int32]kgo.EpochOffset{}
				}
				set[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: c.At}
			}
		}
	}
	th.cl.SetOffsets(set)
	for _, r := range again {
		if err := th.createTask(ctx, r.id, r.parts); err != nil {
			return err
		}
	}
	return nil
}

func (th *streamThread) takeProduceErr() error {
	th.produceMu.Lock()
	defer th.produceMu.Unlock()
	err := th.produceErr
	th.produceErr = nil
	if err != nil {
		return fmt.Errorf("streams: producing: %w", err)
	}
	return nil
}

// shutdown commits and closes the tasks, then leaves the group.
func (th *streamThread) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := th.commit(ctx); err != nil {
		th.log.Warn("final commit failed", "error", err)
	}
	for _, t := range th.tasks {
		th.closeTask(t)
	}
	for id := range th.standbys {
		th.closeStandby(id)
	}
	if th.standbyClient != nil {
		th.standbyClient.Close()
	}
	if th.eos {
		th.sess.Close()
	} else {
		th.cl.Close()
	}
}

// threadEnv is a task's environment in a stream thread.
type threadEnv struct{ th *streamThread }

func (e *threadEnv) now() int64                                    { return time.Now().UnixMilli() }
func (e *threadEnv) applicationID() string                         { return e.th.app.cfg.ApplicationID }
func (e *threadEnv) resolveTopic(name string) string               { return e.th.app.resolveTopic(name) }
func (e *threadEnv) logger() *slog.Logger                          { return e.th.log }
func (e *threadEnv) taskMetrics(id TaskID) *taskMetrics            { return e.th.app.mets.forTask(id) }
func (e *threadEnv) partitions(topic string) (int32, error)        { return e.th.partitions(topic) }
func (e *threadEnv) openStore(t *task, def *storeDef) (any, error) { return e.th.openStore(t, def) }

func (e *threadEnv) send(r outRecord) error {
	th := e.th
	kr := &kgo.Record{Topic: r.topic, Key: r.key, Value: r.value, Timestamp: time.UnixMilli(r.ts), Partition: r.partition}
	for _, h := range r.headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	if r.partition >= 0 {
		kr.Context = context.WithValue(context.Background(), manualPartition{}, true)
	}
	changelog := r.partition >= 0 && th.app.plan.changelogs[r.topic].partitions > 0
	promise := func(rec *kgo.Record, err error) {
		th.produceMu.Lock()
		defer th.produceMu.Unlock()
		if err != nil && th.produceErr == nil {
			th.produceErr = err
		}
		if err == nil && changelog {
			tp := topicPartition{rec.Topic, rec.Partition}
			if rec.Offset+1 > th.changelogs[tp] {
				th.changelogs[tp] = rec.Offset + 1
			}
		}
	}
	if th.eos {
		th.sess.Produce(context.Background(), kr, promise)
	} else {
		th.cl.Produce(context.Background(), kr, promise)
	}
	return nil
}

type manualPartition struct{}

func (th *streamThread) partitions(topic string) (int32, error) {
	details, err := th.adm.ListTopics(context.Background(), topic)
	if err != nil {
		return 0, err
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		return 0, fmt.Errorf("streams: topic %s is not there", topic)
	}
	return int32(len(d.Partitions)), nil
}
