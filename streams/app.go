package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	tasks "github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/streams/state"
)

// State is an application's lifecycle state (Kafka's KafkaStreams.State).
type State int

const (
	Created State = iota
	Rebalancing
	Running
	PendingShutdown
	NotRunning
	PendingError
	Error
)

func (s State) String() string {
	return [...]string{"CREATED", "REBALANCING", "RUNNING", "PENDING_SHUTDOWN", "NOT_RUNNING", "PENDING_ERROR", "ERROR"}[s]
}

// App runs a topology against a Kafka cluster (Kafka's KafkaStreams): a
// member of the consumer group application.id per stream thread, one task
// per partition of each subtopology, spread over the application's
// instances by the group.
type App struct {
	topo *Topology
	bt   *builtTopology
	cfg  Config
	mets *metrics
	log  *slog.Logger

	mu      sync.Mutex
	state   State
	err     error
	group   *tasks.Group
	cancel  context.CancelFunc
	threads []*streamThread
	plan    *topicPlan
	admin   *kgo.Client
	global  *globalThread // nil without global stores
	query   queryables
	// stateDir is <state.dir>/<application.id>, opened when the topology
	// has a persistent store; blockCache is pebble's cache, shared by the
	// instance's stores.
	stateDir   *state.StateDirectory
	persistent bool
	blockCache *state.BlockCache
	// processID names this instance to the group's assignor (Kafka's
	// process UUID): its threads' tasks are balanced as one instance's.
	processID string
	done      chan struct{}
	doneOnce  sync.Once
}

// New checks the topology and the configuration.
func New(topo *Topology, cfg Config) (*App, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	bt, err := topo.build()
	if err != nil {
		return nil, err
	}
	return &App{topo: topo, bt: bt, cfg: cfg, mets: newMetrics(), done: make(chan struct{}), processID: uuid.NewString(),
		log: slog.Default().With("component", "streams", "application.id", cfg.ApplicationID)}, nil
}

// WithLogger sets the logger (default: slog's default).
func (a *App) WithLogger(l *slog.Logger) *App {
	a.log = l.With("component", "streams", "application.id", a.cfg.ApplicationID)
	return a
}

// State is the application's state.
func (a *App) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// Err is why the application stopped in the ERROR state.
func (a *App) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Done is closed when the application stopped (closed or failed).
func (a *App) Done() <-chan struct{} { return a.done }

// MetricsHandler serves the application's metrics in Prometheus' text
// format.
func (a *App) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(a.mets.reg, promhttp.HandlerOpts{})
}

func (a *App) setState(s State) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == Error || a.state == NotRunning {
		return
	}
	a.state = s
}

// Start sizes and creates the internal topics, then starts the stream
// threads. It returns once they run; Close stops them.
func (a *App) Start(ctx context.Context) error {
	a.mu.Lock()
	if a.state != Created {
		a.mu.Unlock()
		return fmt.Errorf("streams: Start on an application in state %s", a.state)
	}
	a.state = Rebalancing
	a.mu.Unlock()
	if err := a.prepare(ctx); err != nil {
		a.fail(err)
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.group = tasks.NewGroup(runCtx)
	if len(a.bt.globalGroups) > 0 {
		g, err := newGlobalThread(a)
		if err == nil {
			err = g.bootstrap(ctx)
		}
		if err != nil {
			a.fail(err)
			a.stopThreads()
			return err
		}
		a.global = g
		a.group.Go(func(ctx context.Context) {
			if err := g.run(ctx); err != nil {
				a.fail(err)
			}
		})
	}
	var wg sync.WaitGroup
	for i := 0; i < a.cfg.NumStreamThreads; i++ {
		th, err := newStreamThread(a, i+1)
		if err != nil {
			a.fail(err)
			a.stopThreads()
			return err
		}
		a.threads = append(a.threads, th)
	}
	for _, th := range a.threads {
		th := th
		wg.Add(1)
		a.group.Go(func(ctx context.Context) {
			defer wg.Done()
			if err := th.run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				a.fail(err)
			}
		})
	}
	a.group.Go(func(ctx context.Context) {
		wg.Wait()
		a.mu.Lock()
		if a.state != Error {
			a.state = NotRunning
		}
		a.mu.Unlock()
		a.markDone()
	})
	return nil
}

func (a *App) markDone() { a.doneOnce.Do(func() { close(a.done) }) }

func (a *App) prepare(ctx context.Context) error {
	opts := append([]kgo.Opt{kgo.SeedBrokers(a.cfg.BootstrapServers...)}, a.cfg.ClientOptions...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("streams: %w", err)
	}
	a.admin = cl
	adm := kadm.NewClient(cl)
	var sources []string
	for _, st := range append(append([]*subtopology{}, a.bt.subtopologies...), a.bt.globalGroups...) {
		for topic := range st.topics {
			if _, internal := a.topo.internalTopics[topic]; !internal {
				sources = append(sources, topic)
			}
		}
	}
	counts := map[string]int32{}
	if len(sources) > 0 {
		details, err := adm.ListTopics(ctx, sources...)
		if err != nil {
			return fmt.Errorf("streams: list source topics: %w", err)
		}
		for name, d := range details {
			if d.Err == nil {
				counts[name] = int32(len(d.Partitions))
			}
		}
	}
	plan, err := planTopics(a.cfg.ApplicationID, a.topo, a.bt, counts, a.cfg.WindowStoreChangelogAdditionalRetention.Milliseconds())
	if err != nil {
		return err
	}
	a.plan = plan
	for _, def := range a.topo.stores {
		if !def.inMemory && !def.global && (def.kind == keyValueStore || def.kind == windowStore || def.kind == sessionStore) {
			a.persistent = true
		}
	}
	if a.persistent {
		dir, err := state.OpenStateDirectory(a.cfg.StateDir, a.cfg.ApplicationID)
		if err != nil {
			return fmt.Errorf("streams: state.dir: %w", err)
		}
		a.stateDir = dir
		a.blockCache = state.NewBlockCache(state.DefaultBlockCacheSize)
	}
	return ensureTopics(ctx, adm, plan, a.cfg.ReplicationFactor)
}

// fail moves the application to ERROR with err and stops its threads.
func (a *App) fail(err error) {
	a.mu.Lock()
	if a.err == nil {
		a.err = err
		a.log.Error("stream application failed", "error", err)
	}
	a.state = Error
	a.mu.Unlock()
	if a.cancel != nil {
		a.cancel() // not Stop: a thread failing cannot wait for itself
	}
}

// Close stops the threads: each commits what it processed, closes its tasks
// and leaves the group.
func (a *App) Close() error {
	a.mu.Lock()
	if a.state == Created {
		a.state = NotRunning
		a.mu.Unlock()
		a.markDone()
		return nil
	}
	started := len(a.threads) > 0 || a.global != nil
	if a.state != Error && a.state != NotRunning {
		a.state = PendingShutdown
	}
	a.mu.Unlock()
	a.stopThreads()
	if !started {
		// Start failed before any thread ran: nothing will mark it done.
		a.markDone()
	}
	<-a.done
	if a.admin != nil {
		a.admin.Close()
	}
	if a.blockCache != nil {
		a.blockCache.Close()
	}
	return a.Err()
}

func (a *App) stopThreads() {
	if a.group != nil {
		a.group.Stop()
	}
}

func (a *App) resolveTopic(name string) string {
	if _, ok := a.topo.internalTopics[name]; ok {
		return a.cfg.ApplicationID + "-" + name
	}
	return name
}
