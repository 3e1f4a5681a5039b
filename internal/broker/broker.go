package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/sharecoord"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/telemetry"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/samsa-io/samsa/internal/version"
	"github.com/samsa-io/samsa/internal/vfs"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Listener is one configured listener, from Kafka's listeners syntax
// NAME://host:port.
type Listener struct {
	Name string
	Host string
	Port int
	// SecurityProtocol is the listener's protocol; New fills it from
	// listener.security.protocol.map when it is empty.
	SecurityProtocol string
}

func (l Listener) String() string {
	return l.Name + "://" + net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

// ParseListeners parses Kafka's comma-separated listener list.
func ParseListeners(s string) ([]Listener, error) {
	var out []Listener
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, addr, ok := strings.Cut(item, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("broker: listener %q is not NAME://host:port", item)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("broker: listener %q: %w", item, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("broker: listener %q: bad port", item)
		}
		out = append(out, Listener{Name: strings.ToUpper(name), Host: host, Port: p})
	}
	if len(out) == 0 {
		return nil, errors.New("broker: no listeners")
	}
	return out, nil
}

// Config is what the broker needs to start, resolved from Kafka's config
// names by the caller (cmd/samsa).
type Config struct {
	NodeID                int32
	Listeners             []Listener
	AdvertisedListeners   []Listener // default: Listeners, with bound ports filled in
	SocketRequestMaxBytes int32
	ConnectionsMaxIdle    time.Duration
	// LogDirs are log.dirs, the data directories (several: JBOD,
	// logdirs.go); LogDir, the first, alone when LogDirs is empty.
	LogDirs []string
	LogDir  string
	// Values is the broker's static config (server.properties and flags),
	// the base for dynamic broker configs and topic config defaults.
	Values config.Values
	// Durable acknowledges produces only once a group commit has fsynced
	// them (and consumers see only fsynced data).
	Durable bool
	// DisableSendfile makes fetches copy record bytes through user space;
	// for measurements only.
	DisableSendfile bool
	// HTTPListener is the host:port of the HTTP listener serving
	// /metrics, /healthz and /readyz (http.go); empty: none.
	// ConfigFromValues fills it from samsa.http.listener, whose default
	// is 127.0.0.1:9644: a test gives port 0 or leaves it empty.
	HTTPListener string
	// SchemaIDs answers broker-side schema ID validation
	// (schema_validation.go); nil: no registry, and a topic may not turn
	// validation on. cmd/samsa sets it from confluent.schema.registry.url
	// or samsa.schema.registry.listener.
	SchemaIDs SchemaIDs

	FS     vfs.FS
	Clock  clock.Clock
	Logger *slog.Logger

	quorum quorumSettings // resolved by New from Values (quorum.go)
}

func (c *Config) fill() {
	if c.SocketRequestMaxBytes <= 0 {
		c.SocketRequestMaxBytes = 100 << 20
	}
	if c.ConnectionsMaxIdle <= 0 {
		c.ConnectionsMaxIdle = 10 * time.Minute
	}
	if c.FS == nil {
		c.FS = vfs.OS
	}
	if c.Clock == nil {
		c.Clock = clock.Real
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if len(c.LogDirs) == 0 && c.LogDir != "" {
		c.LogDirs = []string{c.LogDir}
	}
	if len(c.LogDirs) > 0 {
		c.LogDir = c.LogDirs[0]
	}
}

// resolveListeners gives every listener its security protocol and refuses
// what cannot be served: a protocol other than PLAINTEXT, a listener name the
// protocol map does not know, an advertised listener with no listener of its
// name.
func (c *Config) resolveListeners() error {
	c.Listeners = slices.Clone(c.Listeners)
	for i := range c.Listeners {
		l := &c.Listeners[i]
		if l.SecurityProtocol == "" {
			p, ok := c.Values.SecurityProtocol(l.Name)
			if !ok {
				return fmt.Errorf("broker: listener %s: listener.security.protocol.map has no security protocol for %s", l, l.Name)
			}
			l.SecurityProtocol = p
		}
	}
	for _, a := range c.AdvertisedListeners {
		if !slices.ContainsFunc(c.Listeners, func(l Listener) bool { return l.Name == a.Name }) {
			return fmt.Errorf("broker: advertised listener %s: no listener is named %s", a, a.Name)
		}
	}
	return nil
}

// Broker serves the Kafka protocol.
type Broker struct {
	cfg   Config
	log   *slog.Logger
	tasks *task.Group

	logs   *storage.Manager
	ctrl   *controller.Controller
	groups *group.Coordinator
	txns   *txn.Coordinator
	// shareCoord serves the __share_group_state partitions led here;
	// shareParts and shareSessions are the share-partitions this broker
	// leads and its share consumers' sessions (KIP-932, share_*.go).
	shareCoord    *sharecoord.Coordinator
	shareParts    *shareParts
	shareSessions *shareSessions
	// shareSettingsCache holds share groups' resolved configs (share_settings.go).
	shareSettingsCache shareSettingsCache
	meta               atomic.Pointer[metadata.Image]

	// shareStates is the share coordinator's state of share groups'
	// partitions, for the group coordinator's share admin APIs and
	// DeleteGroups (share_states.go). Set before startGroups.
	shareStates group.ShareStates

	// loggers are the log levels of the broker loggers (loggers.go).
	loggers *loggerLevels
	metaMu  sync.Mutex // serialises applyImage
	// failedInstalls are the topics whose last install failed, which the
	// next applyImage tries again. Guarded by metaMu.
	failedInstalls map[model.TopicID]bool
	// checkpointedHW is the high-watermark checkpoint read at start
	// (hw_checkpoint.go), where replicas opened then begin; read-only after.
	checkpointedHW map[model.TopicPartition]int64

	// storage is the directories' meta.properties as found at New, and
	// clusterID the cluster ID they hold: "" until a directory from before
	// meta.properties adopts its metadata's (format.go).
	storage   *metaprops.Ensemble
	clusterID string

	// imageApplied is notified each time applyImage installs an image.
	imageApplied task.Broadcast
	topics       *topicTable
	// createTopicsFn auto-creates topics with defaults and waits until the
	// broker has applied the image holding them (wired to the controller).
	createTopicsFn func(ctx context.Context, names []string) error
	fetchSessions  *fetchSessions
	conns          *connLimits         // max.connections, set from each image (meta.go)
	quotas         clientQuotas        // client quotas, set from each image (quotas.go)
	connRates      *connRates          // connection creation rates (connrate.go)
	producerIDs    producerIDAllocator // InitProducerId's current block (22_init_producer_id.go)
	connIDs        atomic.Uint64
	counters       counters
	metrics        *brokerMetrics // metrics.go
	// telemetry receives client metrics (KIP-714, telemetry.go); nil
	// without an HTTP listener to re-export them on.
	telemetry *telemetry.Manager
	// replThrottle is the replication throttles' rates, set from each
	// image (replication_throttle.go).
	replThrottle *replicationThrottle
	// shuttingDown is set when Close begins; /readyz says so from then.
	shuttingDown atomic.Bool
	// autoCreate tracks Metadata's background topic creations, so a topic
	// asked for again while it is being created is not created twice.
	autoCreate struct {
		sync.Mutex
		inFlight map[string]bool
	}
	// acceptedHook, when set (by tests, before Start), sees each accepted
	// connection once configureConn has set it up.
	acceptedHook func(net.Conn)
	// security is each secured listener's TLS and SASL (security.go), by
	// listener name; PLAINTEXT listeners have none.
	security map[string]*listenerSecurity
	// authLog writes the rate-limited lines of failed authentications
	// and of authorization denials.
	authLog *rateLimitedLog
	// authz is the ACL authorizer, nil without authorizer.class.name
	// (authz.go).
	authz authzState
	// crashOnClose, set by tests, makes Close skip the controlled shutdown,
	// as a killed process would.
	crashOnClose bool
	// started is closed when Start has brought the broker up; connections
	// accepted before (a quorum's controller listener serves Raft while
	// the quorum forms) wait for it before reading a Kafka request.
	started chan struct{}
	// ctrlReady is closed once the controller is open: the controller-only
	// APIs are served from then on (brokers register before they start).
	ctrlReady chan struct{}
	peers     *peers           // clients of the other nodes (peer.go)
	fetchers  *fetchers        // replica fetchers (replicas.go)
	coordSync *coordinatorSync // coordinators following leadership (coordinators.go)
	life      *lifecycle       // registration and heartbeats, in a quorum (lifecycle.go)
	movers    *movers          // replica moves between log directories (34_alter_replica_log_dirs.go)
	dirAssign *dirAssignments  // replicas' directories for the controller (logdirs.go)
	// failed is closed, with failure set, when the broker must stop on its
	// own: every log directory, or the metadata log's, failed (logdirs.go).
	failed     chan struct{}
	failure    error
	failedOnce sync.Once
	mu         struct {
		sync.Mutex
		listeners []net.Listener
		bound     []Listener // listeners with their actual ports
		closed    bool
		// httpLn and httpSrv are the HTTP listener (http.go), nil when
		// it is off.
		httpLn  net.Listener
		httpSrv *http.Server
	}
}

// New builds a broker: it checks its directories' meta.properties (format.go),
// opens its log directory and formats what a single node may format. Start
// makes it serve.
func New(cfg Config) (*Broker, error) {
	cfg.fill()
	if len(cfg.Listeners) == 0 {
		return nil, errors.New("broker: no listeners configured")
	}
	if cfg.LogDir == "" {
		return nil, errors.New("broker: no log directory configured")
	}
	if cfg.Values.IsZero() {
		v, err := config.Parse(config.Broker, samsaDefaults)
		if err != nil {
			return nil, err
		}
		cfg.Values = v
	}
	if err := cfg.resolveListeners(); err != nil {
		return nil, err
	}
	if err := cfg.resolveQuorum(); err != nil {
		return nil, err
	}
	ens, clusterID, err := loadStorage(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.quorum.dynamicVoter() {
		if cfg.quorum.initialVoters, err = initialVotersOf(cfg); err != nil {
			return nil, err
		}
	}
	// Every logger of the broker and of what it runs goes through the
	// broker loggers' levels (loggers.go).
	levels := newLoggerLevels(cfg.Logger.Handler())
	cfg.Logger = slog.New(&levelHandler{inner: cfg.Logger.Handler(), levels: levels})
	b := &Broker{cfg: cfg, loggers: levels, log: cfg.Logger.With("component", "broker"), failedInstalls: map[model.TopicID]bool{}, topics: newTopicTable(), started: make(chan struct{}), ctrlReady: make(chan struct{}), peers: newPeers(cfg.NodeID), life: newLifecycle(),
		movers: newMovers(), dirAssign: newDirAssignments(), failed: make(chan struct{}),
		fetchSessions: newFetchSessions(int(cfg.Values.Int("max.incremental.fetch.session.cache.slots"))),
		conns:         newConnLimits(),
		quotas:        newClientQuotas(cfg.Values),
		connRates:     newConnRates(cfg.Values),
		replThrottle:  newReplicationThrottle(cfg.Values)}
	logs, err := storage.NewManager(managerConfig(cfg.LogDirs, cfg.Values), storage.Options{FS: cfg.FS, Clock: cfg.Clock, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	b.logs = logs
	if err := b.initSecurity(); err != nil {
		logs.Close()
		return nil, err
	}
	b.initAuthorizer()
	if err := b.formatStorage(ens, clusterID); err != nil {
		logs.Close()
		return nil, err
	}
	b.fetchers = newFetchers(b)
	b.coordSync = newCoordinatorSync()
	b.shareParts, b.shareSessions = newShareParts(), newShareSessions()
	b.shareStates = brokerShareStates{b}
	b.logs.HighWatermark = b.highWatermarkOf
	b.createTopicsFn = b.autoCreateTopics
	b.telemetry = newTelemetry(cfg)
	b.metrics = newBrokerMetrics(b)
	// Last, so no error path above has a listener to close.
	if err := b.bindHTTP(); err != nil {
		logs.Close()
		return nil, err
	}
	return b, nil
}

// managerConfig maps the broker configs of the log manager's background
// work. Kafka's cleaner with log.cleaner.threads=0 has no thread and
// compacts nothing; here one cleaner runs, with the key map memory one of
// Kafka's threads would have, so 0 turns it off. The recovery point and
// the log start offset share one checkpoint file, written at the shorter
// of their two intervals. The flusher looks for logs past flush.ms every
// log.flush.scheduler.interval.ms when that is set; Kafka's default
// (never) would leave a topic's flush.ms unenforced, so it is every second
// otherwise.
func managerConfig(dirs []string, v config.Values) storage.ManagerConfig {
	threads := int64(v.Int("log.cleaner.threads"))
	c := storage.ManagerConfig{
		Dirs:                    dirs,
		RetentionCheckInterval:  millis(v.Long("log.retention.check.interval.ms")),
		CheckpointInterval:      millis(min(v.Long("log.flush.offset.checkpoint.interval.ms"), v.Long("log.flush.start.offset.checkpoint.interval.ms"))),
		ProducerIDExpiration:    millis(v.Long("producer.id.expiration.ms")),
		ProducerExpiryInterval:  millis(v.Long("producer.id.expiration.check.interval.ms")),
		CleanerBackoff:          millis(v.Long("log.cleaner.backoff.ms")),
		CleanerMapMemory:        int(v.Long("log.cleaner.dedupe.buffer.size") / max(threads, 1)),
		CleanerDisabled:         !v.Bool("log.cleaner.enable"),
		CleanerPaused:           threads == 0,
		CleanerIOBytesPerSecond: v.Double("log.cleaner.io.max.bytes.per.second"),
	}
	if v.IsSet("log.flush.scheduler.interval.ms") {
		c.FlushCheckInterval = millis(v.Long("log.flush.scheduler.interval.ms"))
	}
	return c
}

// cleanerSettings are the log cleaner's dynamic settings from a broker
// config (log.cleaner.threads, dedupe.buffer.size, io.max.bytes.per.second).
func cleanerSettings(v config.Values) storage.CleanerSettings {
	threads := int64(v.Int("log.cleaner.threads"))
	return storage.CleanerSettings{
		MapMemory:        int(v.Long("log.cleaner.dedupe.buffer.size") / max(threads, 1)),
		Paused:           threads == 0,
		IOBytesPerSecond: v.Double("log.cleaner.io.max.bytes.per.second"),
	}
}

// millis converts a config in milliseconds, saturating where Kafka's
// Long.MAX_VALUE "never" would overflow a Duration.
func millis(ms int64) time.Duration {
	if ms > int64(math.MaxInt64/time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// metadataDir holds the controller's Raft store, beside the partitions
// (Kafka's __cluster_metadata-0; no "-N" suffix here, so the log manager
// never takes it for a partition).
const metadataDir = "__cluster_metadata"

// Start binds every listener, opens the controller (the metadata quorum of
// this one node), brings local partitions up to its image, and serves until
// ctx ends or Close.
func (b *Broker) Start(ctx context.Context) error {
	b.tasks = task.NewGroup(ctx)
	b.serveHTTP()
	b.startSecurity()
	var lns []net.Listener
	for _, l := range b.cfg.Listeners {
		ln, err := b.listen(ctx, l)
		if err != nil {
			b.closeListeners()
			return fmt.Errorf("broker: listen %s: %w", l, err)
		}
		bound := l
		bound.Port = ln.Addr().(*net.TCPAddr).Port
		b.mu.Lock()
		b.mu.listeners = append(b.mu.listeners, ln)
		b.mu.bound = append(b.mu.bound, bound)
		b.mu.Unlock()
		lns = append(lns, ln)
	}
	if b.cfg.quorum.cluster() && b.cfg.quorum.broker {
		b.checkpointedHW = b.readHighWatermarks()
	}
	ctrl, err := controller.New(b.controllerConfig())
	if err != nil {
		b.closeListeners()
		return fmt.Errorf("broker: start controller: %w", err)
	}
	b.ctrl = ctrl
	// A quorum forms over the controller listeners, so they serve before
	// the controller can start; their Kafka requests wait (conn.serve).
	for i, ln := range lns {
		if bound := b.Listeners()[i]; b.cfg.quorum.early(bound.Name) {
			b.tasks.Go(func(ctx context.Context) { b.acceptLoop(ctx, ln, bound) })
		}
	}
	if err := b.startController(ctx); err != nil {
		b.closeListeners()
		return err
	}
	close(b.ctrlReady)
	if b.cfg.quorum.cluster() && b.cfg.quorum.broker {
		// A controller-only node registers no broker: it hosts no
		// partitions and serves only its controller listeners.
		if err := b.startLifecycle(ctx); err != nil {
			b.closeListeners()
			return err
		}
	}
	b.warnNoEffect()
	if b.cfg.quorum.cluster() {
		b.tasks.Go(b.tickLeaders) // a single node's ISR is itself: nothing to shrink
		if b.cfg.quorum.broker {
			b.tasks.Go(b.checkpointHighWatermarks)
		}
	}
	b.logs.Start(b.tasks.Context())
	b.tasks.Go(b.watchLogDirs)
	b.tasks.Go(b.sendDirAssignments)
	b.startGroups()
	b.startTxns()
	b.startShareCoord()
	b.coordSync.started.Store(true)
	b.markLedLoading()
	b.tasks.Go(b.runCoordinatorSync)
	b.tasks.Go(b.runShareLocks)
	for i, ln := range lns {
		if bound := b.Listeners()[i]; !b.cfg.quorum.early(bound.Name) {
			b.tasks.Go(func(ctx context.Context) { b.acceptLoop(ctx, ln, bound) })
		}
	}
	close(b.started)
	return nil
}

// Failed is closed when the broker has to stop on its own (Failure says
// why): every log directory failed, or the one holding the metadata log,
// as Kafka's broker halts then. The caller closes it.
func (b *Broker) Failed() <-chan struct{} { return b.failed }

// Failure is why Failed closed.
func (b *Broker) Failure() error {
	select {
	case <-b.failed:
		return b.failure
	default:
		return nil
	}
}

// fail asks the broker's owner to stop it (Failed).
func (b *Broker) fail(err error) {
	b.failedOnce.Do(func() {
		b.log.Error("stopping the broker", "err", err)
		b.failure = err
		close(b.failed)
	})
}

// Summary describes the started broker in one log line's attributes: what
// an operator needs to know that it is up and how clients reach it.
func (b *Broker) Summary() []any {
	var advertised []string
	for _, l := range b.Listeners() {
		a := b.advertised(l.Name)
		advertised = append(advertised, fmt.Sprintf("%s://%s (bound %s)", l.Name, net.JoinHostPort(a.Host, strconv.Itoa(a.Port)),
			net.JoinHostPort(l.Host, strconv.Itoa(l.Port))))
	}
	durability := "page cache (acks once written; fsync per flush.messages/flush.ms)"
	if b.cfg.Durable {
		durability = "durable (acks once fsynced)"
	}
	img := b.meta.Load()
	clusterID, topics := "", 0
	if img != nil {
		clusterID, topics = img.ClusterID(), len(img.Topics())
	}
	return []any{"version", version.String(), "node_id", b.cfg.NodeID, "cluster_id", clusterID,
		"listeners", strings.Join(advertised, ", "), "log_dirs", strings.Join(b.cfg.LogDirs, ","), "durability", durability,
		"topics", topics, "partitions_recovered", len(b.logs.Logs()), "http", b.HTTPAddr()}
}

// warnNoEffect logs each config set (statically or dynamically) that Samsa
// accepts but does nothing with, so an operator who tuned one learns it.
func (b *Broker) warnNoEffect() {
	for _, line := range b.brokerConfig(b.meta.Load()).NoEffect() {
		b.log.Warn(line)
	}
}

// metadataLogDir is where the metadata log lives: metadata.log.dir, by
// default the log directory, as in Kafka.
func (b *Broker) metadataLogDir() string { return metadataLogDirOf(b.cfg.Values, b.cfg.LogDir) }

// endpoints are the broker's advertised client listeners, as registered:
// the controller listeners are the quorum's, not for clients.
func (b *Broker) endpoints() []metadata.Endpoint {
	var eps []metadata.Endpoint
	for _, l := range b.Listeners() {
		if b.cfg.quorum.isControllerListener(l.Name) {
			continue
		}
		adv := b.advertised(l.Name)
		eps = append(eps, metadata.Endpoint{Name: l.Name, Host: adv.Host, Port: int32(adv.Port), SecurityProtocol: l.SecurityProtocol})
	}
	return eps
}

// raftAddr is where a broker-only node's Raft listens: its inter-broker
// listener's advertised address; a joining controller's, its controller
// listener's; "" for a voter.
func (b *Broker) raftAddr() string {
	name := b.cfg.quorum.raftListener
	switch {
	case b.cfg.quorum.joining(model.NodeID(b.cfg.NodeID)):
		// A joining controller's Raft is on its controller listener, as a
		// voter's: AddRaftVoter names that listener.
		name = b.cfg.quorum.listeners[0]
	case !b.cfg.quorum.observer():
		return ""
	}
	a := b.advertised(name)
	return net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
}

func (b *Broker) controllerConfig() controller.Config {
	return controller.Config{
		NodeID:           model.NodeID(b.cfg.NodeID),
		Dir:              filepath.Join(b.metadataLogDir(), metadataDir),
		Endpoints:        b.endpoints(),
		Rack:             b.cfg.Values.String("broker.rack"),
		LogDirs:          b.onlineDirIDs(),
		ClusterID:        b.clusterID,
		Voters:           b.cfg.quorum.voters,
		BootstrapServers: b.cfg.quorum.bootstrap,
		InitialVoters:    b.cfg.quorum.initialVoters,
		RaftAddr:         b.raftAddr(),
		Joining:          b.cfg.quorum.joining(model.NodeID(b.cfg.NodeID)),
		DialRaft:         b.dialRaft,
		ElectionTimeout:  b.cfg.quorum.electionTimeout,
		SessionTimeout:   millis(int64(b.cfg.Values.Int("broker.session.timeout.ms"))),
		Broker:           b.cfg.Values,
		ReplicaSizes:     b.replicaSizes,
		Logger:           b.cfg.Logger,
		Clock:            b.cfg.Clock,
	}
}

// startController starts the controller made by Start (the metadata quorum,
// of this node alone or of the voters) and brings the local partitions up
// to its image.
func (b *Broker) startController(ctx context.Context) error {
	if b.cfg.quorum.cluster() {
		b.log.Info("waiting for the controller quorum", "voters", len(b.cfg.quorum.voters), "bootstrap_servers", strings.Join(b.cfg.quorum.bootstrap, ","))
	}
	err := b.ctrl.Start(ctx)
	if err != nil && b.clusterID != "" {
		return fmt.Errorf("broker: start controller with cluster.id %s from meta.properties: %w", b.clusterID, err)
	}
	if err != nil {
		return fmt.Errorf("broker: start controller: %w", err)
	}
	ctrl := b.ctrl
	// A broker-only node knows no metadata until the active controller
	// adds it to the quorum, which its registration asks for; it checks
	// the cluster ID once caught up (startLifecycle).
	if id := ctrl.Image().ClusterID(); id != "" || !ctrl.Observer() {
		if err := b.adoptClusterID(id); err != nil {
			return err
		}
	}
	ch := ctrl.Changed()
	if err := b.applyImage(ctrl.Image()); err != nil {
		return err
	}
	// A node of a quorum restarts from its last metadata snapshot and
	// learns the rest of the log only once the leader tells it what is
	// committed: its image may lack topics created since, and their
	// partitions must not be taken for stale. It removes them once it is
	// caught up (startLifecycle). The single node's image is its whole log.
	if !b.cfg.quorum.cluster() {
		if err := b.removeStalePartitions(); err != nil {
			return err
		}
	}
	b.tasks.Go(func(ctx context.Context) { b.followMetadata(ctx, ch) })
	return nil
}

// followMetadata applies every new image the controller publishes.
func (b *Broker) followMetadata(ctx context.Context, ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		ch = b.ctrl.Changed()
		b.applyImage(b.ctrl.Image())
	}
}

// removeStalePartitions deletes partition directories of topics the
// metadata no longer has (deleted while this node was down). The image
// must be caught up with the metadata log: a partition it merely has not
// learned of yet would be deleted with its data.
func (b *Broker) removeStalePartitions() error {
	onDisk, err := b.logs.OnDisk()
	if err != nil {
		return err
	}
	for _, tp := range onDisk {
		if ts, ok := b.topics.byTopicName(tp.Topic); ok && int(tp.Partition) < len(ts.partitions) && ts.partitions[tp.Partition] != nil {
			continue
		}
		b.log.Warn("deleting a partition the metadata does not have", "partition", tp.String())
		if err := b.logs.DeleteLog(tp); err != nil {
			return err
		}
	}
	return nil
}

func (b *Broker) highWatermarkOf(tp model.TopicPartition, l *storage.Log) int64 {
	if ts, ok := b.topics.byTopicName(tp.Topic); ok {
		if p, code := ts.partition(tp.Partition); code == 0 {
			return p.HighWatermark()
		}
	}
	return l.LogEndOffset()
}

// autoCreateTopics creates topics with the defaults and applies the image
// that holds them before returning.
func (b *Broker) autoCreateTopics(ctx context.Context, names []string) error {
	reqs := make([]controller.CreateTopic, len(names))
	for i, n := range names {
		reqs[i] = controller.CreateTopic{Name: n, NumPartitions: -1, ReplicationFactor: -1}
	}
	var errs []error
	for _, r := range b.createTopics(ctx, reqs) {
		if r.ErrorCode != 0 && r.ErrorCode != kerr.TopicAlreadyExists.Code {
			errs = append(errs, fmt.Errorf("%s: %s", r.Name, r.ErrorMessage))
		}
	}
	return errors.Join(append(errs, b.applyImage(b.ctrl.Image()))...)
}

// Listeners returns the bound listeners (ports resolved when 0 was asked).
func (b *Broker) Listeners() []Listener {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Listener(nil), b.mu.bound...)
}

// Addr is the host:port of the first listener, for tests and tools.
func (b *Broker) Addr() string {
	ls := b.Listeners()
	if len(ls) == 0 {
		return ""
	}
	return net.JoinHostPort(ls[0].Host, strconv.Itoa(ls[0].Port))
}

// advertised returns the listener clients should use for the listener
// they connected through.
func (b *Broker) advertised(name string) Listener {
	for _, l := range b.cfg.AdvertisedListeners {
		if l.Name == name && l.Port != 0 {
			return l
		}
	}
	for _, l := range b.Listeners() {
		if l.Name == name {
			if adv := b.advertisedHost(name); adv != "" {
				l.Host = adv
			}
			return l
		}
	}
	return Listener{}
}

func (b *Broker) advertisedHost(name string) string {
	for _, l := range b.cfg.AdvertisedListeners {
		if l.Name == name {
			return l.Host
		}
	}
	for _, l := range b.cfg.Listeners {
		if l.Name == name && isWildcardHost(l.Host) {
			// Kafka advertises the machine's name for a listener bound to
			// every interface: 0.0.0.0 is not an address a client can use.
			return localHostName()
		}
	}
	return ""
}

// isWildcardHost reports whether a listener host binds every interface.
func isWildcardHost(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// localHostName is the name clients are told for a wildcard listener: the
// machine's host name, or localhost when it has none.
func localHostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// acceptLoop accepts the listener's connections. At a connection limit
// (connLimits: max.connections) it holds the connection just accepted, not
// reading it, until a slot frees, as Kafka's acceptor does; the next ones
// wait in the listen backlog.
func (b *Broker) acceptLoop(ctx context.Context, ln net.Listener, l Listener) {
	for {
		nc, err := ln.Accept()
		if err == nil && !b.conns.acquire(ctx, l.Name) {
			nc.Close()
			return
		}
		if err == nil {
			// max.connection.creation.rate: the connection waits, unread,
			// and the next ones in the backlog.
			b.pause(ctx, b.connRates.admitListener(l.Name, b.cfg.Clock.Now()))
			if d := b.connRates.admitIP(l.Name, remoteIP(nc), b.cfg.Clock.Now()); d > 0 {
				b.conns.release(l.Name)
				b.log.Info("closing a connection past its IP's connection_creation_rate", "listener", l.Name,
					"remote", nc.RemoteAddr().String(), "after", d)
				b.closeLater(nc, d)
				continue
			}
		}
		if err == nil && !b.conns.admitIP(remoteIP(nc)) {
			b.conns.release(l.Name)
			b.log.Info("closing a connection past max.connections.per.ip", "listener", l.Name, "remote", nc.RemoteAddr().String())
			nc.Close()
			continue
		}
		if err != nil {
			if ctx.Err() != nil || b.isClosed() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			b.log.Error("accept failed", "listener", l.Name, "err", err)
			time.Sleep(10 * time.Millisecond) // EMFILE and friends: do not spin
			continue
		}
		b.configureConn(nc)
		b.metrics.listener(l.Name).connectionCreations.Add(1)
		id := b.connIDs.Add(1)
		c := &conn{b: b, nc: nc, id: id, listener: l.Name, sec: b.security[l.Name], controllerListener: b.cfg.quorum.servesQuorum(l.Name),
			raftListener: b.cfg.quorum.observer() && l.Name == b.cfg.quorum.raftListener,
			log:          b.log.With("conn", id, "remote", nc.RemoteAddr().String())}
		ip := remoteIP(nc)
		b.tasks.Go(func(ctx context.Context) {
			defer b.conns.release(l.Name)
			defer b.conns.leaveIP(ip)
			c.serve(ctx)
		})
	}
}

func (b *Broker) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.closed
}

func (b *Broker) closeListeners() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.closed = true
	for _, ln := range b.mu.listeners {
		ln.Close()
	}
	b.closeHTTPLocked()
}

// Close stops accepting, lets every connection finish the request it is
// handling and send its queued responses, then closes the controller and
// flushes and closes every log (a clean shutdown: the next start does not
// scan them).
func (b *Broker) Close() error {
	b.shuttingDown.Store(true)
	select {
	case <-b.started:
		if !b.crashOnClose {
			b.controlledShutdown(millis(int64(b.cfg.Values.Int("broker.session.timeout.ms"))))
		}
	default:
	}
	b.closeListeners()
	if b.tasks != nil {
		b.tasks.Stop()
	}
	var errs []error
	if b.txns != nil {
		b.txns.Stop()
	}
	if b.groups != nil {
		b.groups.Stop()
	}
	b.peers.close()
	select {
	case <-b.started:
		if b.cfg.quorum.cluster() && b.cfg.quorum.broker && !b.crashOnClose {
			errs = append(errs, b.writeHighWatermarks())
		}
	default:
	}
	if b.ctrl != nil {
		errs = append(errs, b.ctrl.Close())
	}
	errs = append(errs, b.logs.Close())
	return errors.Join(errs...)
}

// handle decodes one request frame and runs its handler.
func (b *Broker) handle(c *conn, buf []byte) (*frame, error) {
	start := time.Now()
	h, body, err := parseRequestHeader(buf)
	if err != nil {
		return nil, err
	}
	if c.sasl != nil {
		if err := c.sasl.admit(kmsg.Key(h.key), b.cfg.Clock.Now()); err != nil {
			return nil, err
		}
	}
	if c.readyGate != nil && !saslExchange(kmsg.Key(h.key)) {
		select {
		case <-c.readyGate:
			c.readyGate = nil
		case <-b.tasks.Context().Done():
			return nil, errors.New("broker: shutting down")
		}
	}
	api, ok := apiTable[kmsg.Key(h.key)]
	if ok && (api.controllerOnly && !c.controllerListener || api.needsTelemetry && b.telemetry == nil) {
		ok = false
	}
	if ok && c.controllerListener && !api.controllerOnly && !saslExchange(api.key) {
		// A controller listener serves while its broker starts; the
		// broker's own APIs wait until it has.
		select {
		case <-b.started:
		case <-b.tasks.Context().Done():
			return nil, errors.New("broker: shutting down")
		}
	}
	if !ok {
		return nil, fmt.Errorf("unknown API key %d (correlation %d)", h.key, h.correlationID)
	}
	if h.version < api.min || h.version > api.max {
		if api.key == kmsg.ApiVersions {
			return encodeResponse(h, unsupportedApiVersions()), nil
		}
		return nil, fmt.Errorf("%s v%d not supported (%d-%d)", api.key.Name(), h.version, api.min, api.max)
	}
	c.clientID = h.clientID
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if req.IsFlexible() {
		if body, err = skipHeaderTags(body); err != nil {
			return nil, err
		}
	}
	if err := req.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", errMalformed, api.key.Name(), h.version, err)
	}
	c.api, c.reqStart, c.reqSize, c.replicaFetch, c.throttle, c.clientWaits = api, start, len(buf), false, 0, false
	c.purgatory = 0
	c.beginAudit(api.key)
	began := time.Now()
	f, err := b.runHandler(api, c, h, req)
	b.metrics.rt.handlerDone(api.key, start, began, c.purgatory)
	b.endAudit(c)
	b.requestHandled(f, api.key, h.version, start)
	return f, err
}

// errHandlerPanicked closes the connection of a request whose handler
// panicked: its state is unknown, so the client starts over on a new one.
var errHandlerPanicked = errors.New("broker: request handler panicked")

// runHandler runs a request's handler and turns a panic into the close of
// this one connection, as Kafka fails the one request: the broker and every
// other connection go on. The stack is logged with the API and the client
// the first time an API panics; later panics of that API are counted and
// logged in one line.
func (b *Broker) runHandler(api apiEntry, c *conn, h requestHeader, req kmsg.Request) (f *frame, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		n := b.counters.handlerPanics[api.key].Add(1)
		attrs := []any{"api", api.key.Name(), "version", h.version, "client_id", h.clientID,
			"client_software", c.clientSoftware, "remote", c.remote(), "panic", fmt.Sprint(r), "panics_of_api", n}
		if n == 1 {
			attrs = append(attrs, "stack", string(debug.Stack()))
		}
		b.log.Error("request handler panicked; closing its connection", attrs...)
		f, err = nil, fmt.Errorf("%w: %s v%d: %v", errHandlerPanicked, api.key.Name(), h.version, r)
	}()
	return api.handle(b, c, h, req)
}
