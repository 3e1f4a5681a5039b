package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/magiconair/properties"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/connectrt"
	"github.com/samsa-io/samsa/internal/connectrt/builtin"
	"github.com/samsa-io/samsa/internal/connectrt/rest"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/version"
)

// connectWorkerNames map the samsa.connect.* configs onto the worker
// properties they set.
var connectWorkerNames = map[string]string{
	"samsa.connect.group.id":                          "group.id",
	"samsa.connect.config.storage.topic":              "config.storage.topic",
	"samsa.connect.offset.storage.topic":              "offset.storage.topic",
	"samsa.connect.status.storage.topic":              "status.storage.topic",
	"samsa.connect.config.storage.replication.factor": "config.storage.replication.factor",
	"samsa.connect.offset.storage.replication.factor": "offset.storage.replication.factor",
	"samsa.connect.status.storage.replication.factor": "status.storage.replication.factor",
	"samsa.connect.key.converter":                     "key.converter",
	"samsa.connect.value.converter":                   "value.converter",
	"samsa.connect.offset.flush.interval.ms":          "offset.flush.interval.ms",
}

// connectRetry is how long the worker's start waits before it is tried
// again (the cluster cannot hold its topics yet).
const connectRetry = 2 * time.Second

// connectStopGrace is how much longer than its tasks' graceful timeout
// serve waits for the worker to stop.
const connectStopGrace = 5 * time.Second

// startConnect runs a distributed Kafka Connect worker inside samsa serve
// when samsa.connect.listener is set: a Kafka client of this broker's
// first PLAINTEXT listener, as samsa connect is of any cluster, serving
// Kafka Connect's REST API on the listener. Serve nodes sharing
// samsa.connect.group.id form one Connect cluster. The configs are
// checked and the listener bound here (a bad value or a port in use stops
// the start); the worker itself starts in the background, retried until
// the cluster can hold its three topics (a node of a cluster still forming
// has fewer brokers than their replication factor), and answers 503 on
// /health meanwhile. It returns a stop function and the worker's REST
// URL; nil, "", nil when Connect is off.
func startConnect(b *broker.Broker, values config.Values, logger *slog.Logger) (func(), string, error) {
	listen := values.String("samsa.connect.listener")
	if listen == "" {
		return nil, "", connectOffSettings(values)
	}
	seed := plaintextSeed(b)
	if seed == "" {
		return nil, "", fmt.Errorf("samsa.connect.listener %s: the Connect worker inside serve reaches the broker through a PLAINTEXT listener, and there is none; run samsa connect with the security settings in its worker properties instead, or set it empty", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, "", fmt.Errorf("samsa.connect.listener %s: %w", listen, err)
	}
	cfg, err := connectWorkerConfig(values, seed, ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	shared := newSharedListener(ln)
	levels := rest.NewLevelVars(lowestLevel(logger))
	o := builtin.Options{
		Config:     cfg,
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(seed)},
		Logger:     slog.New(levelHandler{inner: logger.Handler(), level: levels.LevelVar("org.apache.kafka.connect")}),
		Levels:     levels,
		Version:    version.String(),
	}
	c := &inServeConnect{opts: o, ln: shared, addr: ln.Addr().String(), logger: logger}
	c.group = task.NewGroup(context.Background())
	c.group.Go(c.run)
	logger.Info("connect worker starting", "component", "connect", "listener", c.addr, "group", cfg.GroupID, "cluster", seed)
	return c.stop, "http://" + c.addr, nil
}

// inServeConnect is the Connect worker serve runs.
type inServeConnect struct {
	opts   builtin.Options
	ln     *sharedListener
	addr   string
	logger *slog.Logger
	group  *task.Group

	mu      sync.Mutex
	running *builtin.Running
}

// run starts the worker, again after a failed start. Each attempt serves
// on a view of the one bound listener (builtin.Start closes its listener
// when the start fails), so the port stays bound throughout: a request
// between attempts waits for the next one, which answers 503 until the
// worker is ready.
func (c *inServeConnect) run(ctx context.Context) {
	for {
		o := c.opts
		o.Listener = c.ln.view()
		r, err := builtin.Start(ctx, o)
		if err == nil {
			c.mu.Lock()
			c.running = r
			c.mu.Unlock()
			c.logger.Info("connect worker serving", "component", "connect", "url", r.URL, "group", c.opts.Config.GroupID)
			return
		}
		if ctx.Err() != nil {
			return
		}
		c.logger.Warn("connect worker did not start; retrying", "component", "connect", "err", err, "retry", connectRetry)
		select {
		case <-ctx.Done():
			return
		case <-time.After(connectRetry):
		}
	}
}

// stop stops the worker (its tasks commit their offsets and it leaves the
// group, so its work moves to the other serve nodes at once), or ends a
// start still in progress. The worker lives on the start's context, so a
// started worker is stopped before that context is cancelled.
func (c *inServeConnect) stop() {
	c.mu.Lock()
	r := c.running
	c.mu.Unlock()
	if r != nil {
		c.stopWorker(r)
	}
	c.group.Stop()
	if r == nil {
		c.mu.Lock()
		r = c.running // started as the stop came
		c.mu.Unlock()
		if r != nil {
			c.stopWorker(r)
		}
	}
	c.ln.Close()
}

// stopWorker stops a started worker, waiting for it as long as its tasks
// are given to stop (task.shutdown.graceful.timeout.ms) and a few seconds
// more: a commit that cannot reach its coordinator (the last node of a
// cluster that lost its quorum) must not keep the broker from closing. A
// worker not stopped by then is left to end with the process; its
// uncommitted records are delivered again, as after a crash.
func (c *inServeConnect) stopWorker(r *builtin.Running) {
	done := make(chan struct{})
	// A group of its own that is not waited for when the wait runs out:
	// that goroutine is the worker left to end with the process.
	stopping := task.NewGroup(context.Background())
	stopping.Go(func(context.Context) {
		defer close(done)
		r.Stop()
	})
	wait := c.opts.Config.TaskShutdownTimeout + connectStopGrace
	select {
	case <-done:
		c.logger.Info("connect worker stopped", "component", "connect")
	case <-time.After(wait):
		c.logger.Warn("connect worker did not stop in time; closing the broker without it", "component", "connect", "waited", wait)
	}
}

// connectOffSettings refuses samsa.connect.* settings given while Connect
// is off: they would take no effect.
func connectOffSettings(values config.Values) error {
	var set []string
	for _, name := range append(slices.Collect(maps.Keys(connectWorkerNames)), "samsa.connect.worker.config") {
		if values.IsSet(name) {
			set = append(set, name)
		}
	}
	if len(set) == 0 {
		return nil
	}
	slices.Sort(set)
	return fmt.Errorf("%s set but samsa.connect.listener is empty: Connect is off in serve unless it has a listener (e.g. samsa.connect.listener=127.0.0.1:8083)", strings.Join(set, ", "))
}

// connectWorkerConfig is the worker's config: samsa.connect.worker.config's
// properties, the samsa.connect.* settings, and the broker and listener
// serve gives it.
func connectWorkerConfig(values config.Values, seed, listenAddr string) (connectrt.WorkerConfig, error) {
	props := map[string]string{}
	path := values.String("samsa.connect.worker.config")
	from := "samsa.connect.*"
	if path != "" {
		var err error
		if props, err = readWorkerProperties(path); err != nil {
			return connectrt.WorkerConfig{}, fmt.Errorf("samsa.connect.worker.config: %w", err)
		}
		if err := refuseServeSet(props, path); err != nil {
			return connectrt.WorkerConfig{}, err
		}
		from = "samsa.connect.* and " + path
	}
	for _, name := range slices.Sorted(maps.Keys(connectWorkerNames)) {
		key := connectWorkerNames[name]
		if _, inFile := props[key]; inFile {
			if values.IsSet(name) {
				return connectrt.WorkerConfig{}, fmt.Errorf("%s and %s in samsa.connect.worker.config %s are both set: set one", name, key, path)
			}
			continue
		}
		props[key] = connectValue(values, name)
	}
	props["bootstrap.servers"] = seed
	props["listeners"] = "http://" + listenAddr
	cfg, err := connectrt.ParseWorkerConfig(props, true)
	if err != nil {
		return connectrt.WorkerConfig{}, fmt.Errorf("connect worker (%s): %w", from, err)
	}
	if err := checkConverters(cfg); err != nil {
		return connectrt.WorkerConfig{}, fmt.Errorf("connect worker (%s): %w", from, err)
	}
	return cfg, nil
}

// connectValue is a samsa.connect.* config as a worker property's text.
func connectValue(values config.Values, name string) string {
	e, _ := config.Broker.Lookup(name)
	switch e.Type {
	case config.TypeShort, config.TypeInt, config.TypeLong:
		return fmt.Sprint(values.Long(name))
	}
	return values.String(name)
}

// refuseServeSet refuses the worker properties serve sets itself, and the
// client security settings, which the PLAINTEXT listener does not use.
func refuseServeSet(props map[string]string, path string) error {
	for _, k := range slices.Sorted(maps.Keys(props)) {
		switch {
		case k == "bootstrap.servers":
			return fmt.Errorf("samsa.connect.worker.config %s: bootstrap.servers is set by serve (this broker's PLAINTEXT listener); drop it, or run samsa connect against another cluster", path)
		case k == "listeners":
			return fmt.Errorf("samsa.connect.worker.config %s: listeners is set by serve from samsa.connect.listener; drop it", path)
		case k == "security.protocol", strings.HasPrefix(k, "ssl."), strings.HasPrefix(k, "sasl."):
			return fmt.Errorf("samsa.connect.worker.config %s: %s: the worker inside serve reaches the broker through its PLAINTEXT listener; client security settings are for samsa connect", path, k)
		}
	}
	return nil
}

// checkConverters makes the worker's converters once, so an unknown class
// or a bad option stops serve's start instead of failing every task later.
func checkConverters(cfg connectrt.WorkerConfig) error {
	p := builtin.Plugins()
	for _, side := range []struct {
		prefix, class string
		isKey         bool
	}{{"key.converter", cfg.KeyConverter, true}, {"value.converter", cfg.ValueConverter, false}} {
		conv, err := p.NewConverter(side.class)
		if err != nil {
			return fmt.Errorf("%s: %w", side.prefix, err)
		}
		if err := conv.Configure(withoutPrefix(cfg.ConverterProps, side.prefix+"."), side.isKey); err != nil {
			return fmt.Errorf("%s %s: %w", side.prefix, side.class, err)
		}
	}
	hc, err := p.NewHeaderConverter(cfg.HeaderConverter)
	if err != nil {
		return fmt.Errorf("header.converter: %w", err)
	}
	if err := hc.Configure(withoutPrefix(cfg.ConverterProps, "header.converter.")); err != nil {
		return fmt.Errorf("header.converter %s: %w", cfg.HeaderConverter, err)
	}
	return nil
}

// withoutPrefix are the props under prefix, with it taken off.
func withoutPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if after, ok := strings.CutPrefix(k, prefix); ok {
			out[after] = v
		}
	}
	return out
}

// readWorkerProperties reads a Java properties file as samsa connect does:
// no ${} expansion.
func readWorkerProperties(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.Map(), nil
}

// lowestLevel is the lowest level serve's logger writes, the level
// Connect's loggers start at.
func lowestLevel(logger *slog.Logger) slog.Level {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		if logger.Enabled(context.Background(), l) {
			return l
		}
	}
	return slog.LevelError
}

// levelHandler writes through serve's handler what Connect's admin/loggers
// level lets through, so a level set over the REST API takes effect.
type levelHandler struct {
	inner slog.Handler
	level slog.Leveler
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level.Level() && h.inner.Enabled(ctx, l)
}

func (h levelHandler) Handle(ctx context.Context, r slog.Record) error { return h.inner.Handle(ctx, r) }

func (h levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return levelHandler{inner: h.inner.WithAttrs(as), level: h.level}
}

func (h levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{inner: h.inner.WithGroup(name), level: h.level}
}

// sharedListener keeps the Connect port bound across the worker's start
// attempts: one goroutine accepts on the real listener and hands each
// connection to the view being served.
type sharedListener struct {
	net.Listener
	conns  chan net.Conn
	stop   chan struct{} // Close was called
	done   chan struct{} // the accept loop ended
	accept *task.Group   // owns the accept loop
	once   sync.Once
}

func newSharedListener(ln net.Listener) *sharedListener {
	s := &sharedListener{Listener: ln, conns: make(chan net.Conn), stop: make(chan struct{}), done: make(chan struct{}), accept: task.NewGroup(context.Background())}
	s.accept.Go(s.acceptLoop)
	return s
}

func (s *sharedListener) acceptLoop(context.Context) {
	defer close(s.done)
	for {
		conn, err := s.Listener.Accept()
		if err != nil {
			return // closed
		}
		select {
		case s.conns <- conn:
		case <-s.stop:
			conn.Close()
			return
		}
	}
}

// Close closes the real listener.
func (s *sharedListener) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		err = s.Listener.Close()
		s.accept.Stop()
	})
	return err
}

// view is a listener of its own for one start attempt: closing it leaves
// the port bound.
func (s *sharedListener) view() net.Listener {
	return &listenerView{s: s, closed: make(chan struct{})}
}

type listenerView struct {
	s      *sharedListener
	closed chan struct{}
	once   sync.Once
}

func (v *listenerView) Accept() (net.Conn, error) {
	select {
	case conn := <-v.s.conns:
		select {
		case <-v.closed: // closed as the connection came: the attempt is over
			conn.Close()
			return nil, net.ErrClosed
		default:
			return conn, nil
		}
	case <-v.closed:
		return nil, net.ErrClosed
	case <-v.s.done:
		return nil, net.ErrClosed
	}
}

func (v *listenerView) Close() error {
	v.once.Do(func() { close(v.closed) })
	return nil
}

func (v *listenerView) Addr() net.Addr { return v.s.Addr() }
