package connectrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
	"github.com/samsa-io/samsa/internal/task"
)

// Options are what a worker is made of besides its config.
type Options struct {
	Config  WorkerConfig
	Plugins *Plugins
	// ClientOpts reach the cluster (seed brokers, TLS, SASL); the worker
	// adds its own per client.
	ClientOpts []kgo.Opt
	Logger     *slog.Logger
	// URL is this worker's REST URL as other workers reach it (the
	// advertised listener); its host:port is the worker ID.
	URL string
	// Membership makes the distributed group member; nil in standalone.
	Membership MembershipFactory
	// Version is what GET / and the plugins answer.
	Version, Commit string
}

// Worker runs connectors and tasks, and answers the REST API (api.Herder).
type Worker struct {
	opts     Options
	cfg      WorkerConfig
	plugins  *Plugins
	logger   *slog.Logger
	workerID string
	url      string

	client *kgo.Client // internal topics' writes; idempotent, acks=all
	admin  *kadm.Client
	group  *task.Group

	statuses  *statusStore
	offsets   *offsetStore
	configLog *kafkaLog // nil standalone
	member    Membership

	clusterID string
	kick      chan struct{}
	// pings are health checks answered by the loop (KIP-1017).
	pings chan chan struct{}
	ready atomic.Bool

	mu struct {
		sync.Mutex
		state      *configState
		assignment assignment
		generation int32
		connectors map[string]*connectorRunner
		tasks      map[api.TaskID]*taskRunner
		restarts   []restartRequest
	}
}

// assignment is what this worker runs: everything in standalone mode, the
// group's assignment in distributed mode.
type assignment struct {
	all        bool
	connectors map[string]bool
	tasks      map[api.TaskID]bool
}

func (a assignment) hasConnector(name string) bool { return a.all || a.connectors[name] }
func (a assignment) hasTask(id api.TaskID) bool    { return a.all || a.tasks[id] }

// New makes a worker; Start runs it.
func New(opts Options) (*Worker, error) {
	if opts.Plugins == nil || opts.Plugins.NewConverter == nil || opts.Plugins.NewHeaderConverter == nil || opts.Plugins.NewChain == nil {
		return nil, errors.New("connectrt: plugins with converter and transform factories are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	u, err := url.Parse(opts.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("connectrt: worker URL %q: want http://host:port", opts.URL)
	}
	w := &Worker{opts: opts, cfg: opts.Config, plugins: opts.Plugins, logger: opts.Logger.With("component", "connect"),
		workerID: u.Host, url: opts.URL, statuses: newStatusStore(), offsets: newOffsetStore(), kick: make(chan struct{}, 1),
		pings: make(chan chan struct{}, 16)}
	w.mu.state = newConfigState()
	w.mu.connectors = map[string]*connectorRunner{}
	w.mu.tasks = map[api.TaskID]*taskRunner{}
	if !w.cfg.Distributed {
		w.mu.assignment = assignment{all: true}
		w.offsets.file = w.cfg.OffsetFile
	}
	if err := w.checkConverters(); err != nil {
		return nil, err
	}
	return w, nil
}

// checkConverters makes and configures the worker's converters once, so
// a class that does not exist or a bad option stops the worker at start,
// as Kafka's does, rather than failing every task later.
func (w *Worker) checkConverters() error {
	for _, c := range []struct {
		prefix, class string
		key           bool
	}{{"key.converter", w.cfg.KeyConverter, true}, {"value.converter", w.cfg.ValueConverter, false}} {
		conv, err := w.plugins.NewConverter(c.class)
		if err != nil {
			return fmt.Errorf("%s: %w", c.prefix, err)
		}
		if err := conv.Configure(prefixed(w.cfg.ConverterProps, c.prefix+"."), c.key); err != nil {
			return fmt.Errorf("%s %s: %w", c.prefix, c.class, err)
		}
	}
	h, err := w.plugins.NewHeaderConverter(w.cfg.HeaderConverter)
	if err != nil {
		return fmt.Errorf("header.converter: %w", err)
	}
	if err := h.Configure(prefixed(w.cfg.ConverterProps, "header.converter.")); err != nil {
		return fmt.Errorf("header.converter %s: %w", w.cfg.HeaderConverter, err)
	}
	return nil
}

// HealthCheck returns once the worker's loop answered (KIP-1017's GET
// /health): a loop stuck in a connector's call does not answer in time.
func (w *Worker) HealthCheck(ctx context.Context) error {
	// As Kafka's herder, a worker that has not finished starting does not
	// answer: the REST layer says 503 "starting" when the wait runs out.
	for !w.ready.Load() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	p := make(chan struct{})
	select {
	case w.pings <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ready says whether the worker has started: read its topics and, in
// distributed mode, joined its group and got its first assignment (until
// then /health answers 503 and writes could find no leader).
func (w *Worker) Ready() bool { return w.ready.Load() }

// WorkerID is host:port of the worker's URL, as statuses show it.
func (w *Worker) WorkerID() string { return w.workerID }

// clientOpts are the cluster options plus extra ones.
func (w *Worker) clientOpts(extra ...kgo.Opt) []kgo.Opt {
	return append(append([]kgo.Opt(nil), w.opts.ClientOpts...), extra...)
}

// Start connects, creates and reads the internal topics, joins the group,
// and runs until ctx ends or Stop.
func (w *Worker) Start(ctx context.Context) error {
	// Only Stop ends the worker: a caller's context that ends (a signal) must
	// not stop the topic readers before the tasks have made their last commits.
	w.group = task.NewGroup(context.WithoutCancel(ctx))
	admin, err := clientProps(w.cfg.Admin)
	if err != nil {
		return fmt.Errorf("connect worker: admin.*: %w", err)
	}
	cl, err := kgo.NewClient(append(w.clientOpts(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.ClientID(w.clientID("internal"))), admin...)...)
	if err != nil {
		return fmt.Errorf("connect worker: %w", err)
	}
	w.client, w.admin = cl, kadm.NewClient(cl)
	meta, err := w.admin.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("connect worker: reach the cluster: %w", err)
	}
	w.clusterID = meta.Cluster
	if err := w.offsets.load(); err != nil {
		return err
	}
	if w.cfg.Distributed {
		if err := w.startDistributed(ctx); err != nil {
			return err
		}
	}
	w.group.Go(w.loop)
	if !w.cfg.Distributed {
		w.ready.Store(true) // a distributed worker is ready at its first assignment
	}
	w.logger.Info("connect worker started", "worker_id", w.workerID, "distributed", w.cfg.Distributed, "cluster", w.clusterID)
	return nil
}

func (w *Worker) clientID(what string) string {
	prefix := w.cfg.ClientID
	if prefix == "" {
		prefix = "connect-" + w.workerID
	}
	return prefix + "-" + what
}

// startDistributed creates and reads the three topics and joins the group.
func (w *Worker) startDistributed(ctx context.Context) error {
	if w.opts.Membership == nil {
		return errors.New("connect worker: distributed mode needs a group membership")
	}
	specs := []topicSpec{
		{w.cfg.ConfigTopic, 1, w.cfg.ConfigReplication},
		{w.cfg.OffsetTopic, w.cfg.OffsetPartitions, w.cfg.OffsetReplication},
		{w.cfg.StatusTopic, w.cfg.StatusPartitions, w.cfg.StatusReplication},
	}
	for _, s := range specs {
		if err := ensureTopic(ctx, w.admin, s); err != nil {
			return err
		}
	}
	var err error
	if w.configLog, err = newKafkaLog(w.cfg.ConfigTopic, w.clientOpts(kgo.ClientID(w.clientID("configs"))), w.client, w.admin, w.applyConfig, w.group); err != nil {
		return err
	}
	offsetLog, err := newKafkaLog(w.cfg.OffsetTopic, w.clientOpts(kgo.ClientID(w.clientID("offsets"))), w.client, w.admin, w.offsets.apply, w.group)
	if err != nil {
		return err
	}
	statusLog, err := newKafkaLog(w.cfg.StatusTopic, w.clientOpts(kgo.ClientID(w.clientID("statuses"))), w.client, w.admin, w.statuses.apply, w.group)
	if err != nil {
		return err
	}
	w.offsets.log, w.statuses.log = offsetLog, statusLog
	for _, l := range []*kafkaLog{w.configLog, offsetLog, statusLog} {
		l.start(ctx)
	}
	for _, l := range []*kafkaLog{w.configLog, offsetLog, statusLog} {
		if err := l.readToEnd(ctx); err != nil {
			return err
		}
	}
	w.member, err = w.opts.Membership(w.client, w)
	if err != nil {
		return err
	}
	w.group.Go(func(ctx context.Context) {
		if err := w.member.Run(ctx); err != nil && ctx.Err() == nil {
			w.logger.Error("connect group membership ended", "err", err)
		}
	})
	return nil
}

// applyConfig folds a config topic record in and wakes the loop.
func (w *Worker) applyConfig(r *kgo.Record) {
	w.mu.Lock()
	conns, tasks := w.mu.state.work()
	restart, err := w.mu.state.apply(r.Offset, string(r.Key), r.Value)
	if restart != nil {
		w.mu.restarts = append(w.mu.restarts, *restart)
	}
	conns2, tasks2 := w.mu.state.work()
	w.mu.Unlock()
	if err != nil {
		w.logger.Warn("skipped a config topic record", "err", err)
	}
	// Only a change of what there is to assign needs a rebalance; a new
	// config of a connector that stays where it is does not.
	if w.member != nil && (!slices.Equal(conns, conns2) || !slices.Equal(tasks, tasks2)) {
		w.member.Rejoin()
	}
	w.wake()
}

func (w *Worker) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Stop stops every task and connector, leaves the group and closes.
func (w *Worker) Stop() {
	w.mu.Lock()
	runners := slices.Collect(maps.Values(w.mu.tasks))
	conns := slices.Collect(maps.Values(w.mu.connectors))
	w.mu.Unlock()
	w.stopAll(runners, conns)
	if w.group != nil {
		w.group.Stop()
	}
	for _, l := range []*kafkaLog{w.configLog, w.offsets.log, w.statuses.log} {
		if l != nil {
			l.close()
		}
	}
	if w.client != nil {
		w.client.Close()
	}
}

func (w *Worker) stopAll(tasks []*taskRunner, conns []*connectorRunner) {
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		w.group.Go(func(context.Context) { defer wg.Done(); t.stop() })
	}
	wg.Wait()
	for _, c := range conns {
		c.stop()
	}
}

// loop reconciles what runs with the config and the assignment.
func (w *Worker) loop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		w.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-t.C:
		case p := <-w.pings:
			close(p)
		}
	}
}

// reconcile starts, stops and restarts connectors and tasks so that this
// worker runs exactly its assigned part of the config, in its target state.
func (w *Worker) reconcile(ctx context.Context) {
	w.mu.Lock()
	st := w.mu.state
	as := w.mu.assignment
	restarts := w.mu.restarts
	w.mu.restarts = nil
	var stopConns []*connectorRunner
	var stopTasks []*taskRunner
	for name, c := range w.mu.connectors {
		cfg, ok := st.connectors[name]
		if !ok || !as.hasConnector(name) || !maps.Equal(cfg, c.config) || st.targets[name] != c.target {
			stopConns = append(stopConns, c)
			delete(w.mu.connectors, name)
		}
	}
	for id, t := range w.mu.tasks {
		cfgs := st.tasks[id.Connector]
		if !as.hasTask(id) || id.Task >= len(cfgs) || !maps.Equal(cfgs[id.Task], t.config) || st.targets[id.Connector] == api.TargetStopped {
			stopTasks = append(stopTasks, t)
			delete(w.mu.tasks, id)
		} else if tg := st.targets[id.Connector]; tg != t.target() {
			t.setTarget(tg)
		}
	}
	for _, r := range restarts {
		stopConns, stopTasks = w.restartLocked(r, stopConns, stopTasks)
	}
	w.mu.Unlock()

	w.stopAll(stopTasks, stopConns)
	for _, c := range stopConns {
		w.afterConnectorStop(ctx, c)
	}
	for _, t := range stopTasks {
		w.afterTaskStop(ctx, t)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	gen := w.mu.generation
	for name, cfg := range st.connectors {
		if _, running := w.mu.connectors[name]; running || !as.hasConnector(name) {
			continue
		}
		w.mu.connectors[name] = w.startConnector(ctx, name, cfg, st.targets[name], gen)
	}
	for name, cfgs := range st.tasks {
		if _, ok := st.connectors[name]; !ok || st.targets[name] == api.TargetStopped {
			continue
		}
		for i, cfg := range cfgs {
			id := api.TaskID{Connector: name, Task: i}
			if _, running := w.mu.tasks[id]; running || !as.hasTask(id) {
				continue
			}
			w.mu.tasks[id] = w.startTask(ctx, id, st.connectors[name], cfg, st.targets[name], gen)
		}
	}
}

// restartLocked marks what a restart request restarts on this worker (the
// next pass starts them again).
func (w *Worker) restartLocked(r restartRequest, stopConns []*connectorRunner, stopTasks []*taskRunner) ([]*connectorRunner, []*taskRunner) {
	if c, ok := w.mu.connectors[r.connector]; ok && (!r.onlyFailed || c.failed()) {
		stopConns = append(stopConns, c)
		delete(w.mu.connectors, r.connector)
	}
	if !r.includeTasks {
		return stopConns, stopTasks
	}
	for id, t := range w.mu.tasks {
		if id.Connector == r.connector && (!r.onlyFailed || t.failed()) {
			stopTasks = append(stopTasks, t)
			delete(w.mu.tasks, id)
		}
	}
	return stopConns, stopTasks
}

// afterConnectorStop writes the status a stopped connector leaves: none
// when it was deleted, UNASSIGNED when it moved away.
func (w *Worker) afterConnectorStop(ctx context.Context, c *connectorRunner) {
	w.mu.Lock()
	_, exists := w.mu.state.connectors[c.name]
	assigned := w.mu.assignment.hasConnector(c.name)
	w.mu.Unlock()
	switch {
	case !exists:
		_ = w.statuses.deleteConnector(ctx, c.name, 0)
	case !assigned:
		_ = w.statuses.putConnector(ctx, c.name, status{State: api.StateUnassigned, WorkerID: w.workerID, Generation: c.generation})
	}
}

func (w *Worker) afterTaskStop(ctx context.Context, t *taskRunner) {
	w.mu.Lock()
	_, exists := w.mu.state.connectors[t.id.Connector]
	assigned := w.mu.assignment.hasTask(t.id)
	w.mu.Unlock()
	if exists && !assigned {
		_ = w.statuses.putTask(ctx, t.id, status{State: api.StateUnassigned, WorkerID: w.workerID, Generation: t.generation})
	}
}

// errString is an error's text for status traces.
func errString(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// connectorPlugin instantiates a connector by class.
func (w *Worker) connectorPlugin(class string) (connect.Plugin, connect.Connector, error) {
	pl, err := w.plugins.connector(class)
	if err != nil {
		return connect.Plugin{}, nil, err
	}
	return pl, pl.New(), nil
}
