package streams

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// globalThread keeps the global stores (GlobalTable): it reads every
// partition of their topics, outside the group, into stores every task
// reads (Kafka's GlobalStreamThread). Start waits until it has read to the
// end offsets the topics had (the bootstrap) before any task runs.
type globalThread struct {
	app    *App
	cl     *kgo.Client
	tasks  map[string]*task // by topic
	stores map[string]any
	mu     sync.RWMutex // guards the global stores: the global thread writes, stream threads read
}

// lockedKV is a global store as tasks see it: reads under the global
// thread's read lock.
type lockedKV struct {
	mu *sync.RWMutex
	kv kvState
}

func (l lockedKV) get(key any) (any, int64, bool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.kv.get(key)
}

func (l lockedKV) put(key, value any, ts int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kv.put(key, value, ts)
}

func newGlobalThread(a *App) (*globalThread, error) {
	g := &globalThread{app: a, tasks: map[string]*task{}, stores: map[string]any{}}
	for _, name := range a.bt.globalStores {
		s, err := openMemoryStore(a.topo.stores[name])
		if err != nil {
			return nil, err
		}
		kv, ok := s.(kvState)
		if !ok {
			return nil, fmt.Errorf("streams: global store %s must be a key-value store", name)
		}
		g.stores[name] = lockedKV{mu: &g.mu, kv: kv}
	}
	return g, nil
}

// bootstrap reads the global topics to their current end.
func (g *globalThread) bootstrap(ctx context.Context) error {
	a := g.app
	var topics []string
	for _, st := range a.bt.globalGroups {
		for topic := range st.topics {
			topics = append(topics, topic)
		}
	}
	sort.Strings(topics)
	adm := kadm.NewClient(a.admin)
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("streams: global topics' end offsets: %w", err)
	}
	env := &globalEnv{g: g}
	for _, st := range a.bt.globalGroups {
		var parts []topicPartition
		for topic := range st.topics {
			ends.Each(func(o kadm.ListedOffset) {
				if o.Topic == topic {
					parts = append(parts, topicPartition{topic, o.Partition})
				}
			})
		}
		t, err := newTask(TaskID{st.id, -1}, a.topo, st, env, parts, &taskConfig{maxTaskIdleMs: -1, deserializationHandler: a.cfg.DeserializationHandler})
		if err != nil {
			return err
		}
		t.addGlobalStores(g.stores)
		if err := t.open(); err != nil {
			return err
		}
		for topic := range st.topics {
			g.tasks[topic] = t
		}
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(a.cfg.BootstrapServers...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID(a.cfg.ApplicationID + "-GlobalStreamThread")}, a.cfg.ClientOptions...)
	if a.cfg.ProcessingGuarantee == ExactlyOnceV2 {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	g.cl, err = kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	pending := map[topicPartition]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			pending[topicPartition{o.Topic, o.Partition}] = o.Offset
		}
	})
	for len(pending) > 0 {
		pollCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := g.cl.PollFetches(pollCtx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := g.apply(fs, pending); err != nil {
			return err
		}
		if fs.NumRecords() == 0 && fs.Err0() == nil {
			// Under read_committed the end may be a marker no record
			// stands at: an empty poll ends the bootstrap.
			break
		}
	}
	return nil
}

// apply processes fetched global records, noting how far each partition
// got.
func (g *globalThread) apply(fs kgo.Fetches, pending map[topicPartition]int64) error {
	var err error
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if err != nil || len(fp.Records) == 0 {
			return
		}
		tp := topicPartition{fp.Topic, fp.Partition}
		t := g.tasks[fp.Topic]
		in := make([]inRecord, 0, len(fp.Records))
		for _, r := range fp.Records {
			in = append(in, inRecord{offset: r.Offset, key: r.Key, value: r.Value, timestamp: r.Timestamp.UnixMilli(), headers: headersOf(r.Headers)})
		}
		if err = t.addRecords(tp, in, 0); err != nil {
			return
		}
		if _, err = t.process(len(in)); err != nil {
			return
		}
		if end, ok := pending[tp]; ok && fp.Records[len(fp.Records)-1].Offset+1 >= end {
			delete(pending, tp)
		}
	})
	return err
}

// run keeps the global stores current until ctx ends.
func (g *globalThread) run(ctx context.Context) error {
	defer g.cl.Close()
	for ctx.Err() == nil {
		fs := g.cl.PollFetches(ctx)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return nil
		}
		if err := g.apply(fs, map[topicPartition]int64{}); err != nil {
			return err
		}
	}
	return nil
}

// globalEnv is the global tasks' environment: they write nothing but
// their stores.
type globalEnv struct{ g *globalThread }

func (e *globalEnv) now() int64                         { return time.Now().UnixMilli() }
func (e *globalEnv) applicationID() string              { return e.g.app.cfg.ApplicationID }
func (e *globalEnv) resolveTopic(name string) string    { return e.g.app.resolveTopic(name) }
func (e *globalEnv) logger() *slog.Logger               { return e.g.app.log }
func (e *globalEnv) taskMetrics(id TaskID) *taskMetrics { return e.g.app.mets.forTask(id) }
func (e *globalEnv) partitions(string) (int32, error) {
	return 0, fmt.Errorf("streams: a global store's processor writes to no topic")
}
func (e *globalEnv) openStore(_ *task, def *storeDef) (any, error) {
	return nil, fmt.Errorf("streams: store %s: a global processor uses only its global store", def.name)
}
func (e *globalEnv) send(outRecord) error {
	return fmt.Errorf("streams: a global store's processor cannot forward records")
}
