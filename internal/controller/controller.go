package controller

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Config configures a Controller.
type Config struct {
	// NodeID is this node's node.id; it is the Raft server ID and the ID the
	// local broker registers under.
	NodeID model.NodeID
	// Dir is the metadata directory (metadata.log.dir); Raft keeps its bolt
	// store and snapshots under Dir/raft.
	Dir string
	// Endpoints are the local broker's advertised listeners, registered on
	// every start.
	Endpoints []metadata.Endpoint
	// Rack is the local broker's broker.rack; "" for none.
	Rack string
	// LogDirs are the directory IDs of the local broker's online log
	// directories, registered by the single node (KIP-858).
	LogDirs []string
	// ControllerAddr is the host:port Raft listens on over TCP. Empty (the
	// default) keeps Raft in process on an in-memory transport, which is all
	// a combined single node needs. Ignored when Voters is set.
	ControllerAddr string
	// Voters is the static quorum (controller.quorum.voters). When set,
	// Raft runs over the controller listener: the broker hands each
	// connection that begins with RaftPreamble to ServeRaft, and the first
	// start bootstraps all the voters. A node not among them (a broker-only
	// node) is a Raft non-voter: it bootstraps nothing, the active
	// controller adds it when it registers, and it follows the metadata log
	// without a vote. Empty means a quorum of this node alone.
	Voters []Voter
	// BootstrapServers is controller.quorum.bootstrap.servers when Voters
	// is empty: the quorum runs over the network as with Voters, but its
	// voters are Raft's own configuration. A node not among InitialVoters
	// with a RaftAddr (a broker-only node) follows it as a non-voter, as
	// with Voters.
	BootstrapServers []string
	// InitialVoters, with BootstrapServers, are the voters `samsa storage
	// format` stored (KIP-853's bootstrapping): a voter among them
	// bootstraps Raft with them on its first start, after which Raft's
	// stored configuration rules; its own entry is its Raft address.
	InitialVoters []Voter
	// RaftAddr is where Raft listens on a node not among Voters, for the
	// active controller to reach it: its inter-broker listener, which hands
	// connections that begin with RaftPreamble to ServeRaft. Ignored for a
	// voter, which listens on its controller listener.
	RaftAddr string
	// Joining marks a controller outside the initial voters, started with
	// BootstrapServers to join the quorum (KIP-853's new controller): it
	// bootstraps nothing and waits, as a Raft non-voter at RaftAddr (its
	// controller listener), until AddRaftVoter (AddVoter on the active
	// controller) adds it. Open returns without waiting for an election.
	Joining bool
	// DialRaft opens a connection to another node's Raft listener, set up
	// as that listener's security protocol asks (TLS, a SASL login) and
	// ready for the preamble; nil dials plain TCP. The broker supplies it:
	// it owns the listeners' security.
	DialRaft func(addr string, timeout time.Duration) (net.Conn, error)
	// ElectionTimeout is controller.quorum.election.timeout.ms, for a
	// quorum of several voters; zero keeps hashicorp/raft's one second.
	ElectionTimeout time.Duration
	// SessionTimeout is broker.session.timeout.ms: the active controller
	// fences a broker it has not heard from for this long. Zero means 9 s.
	SessionTimeout time.Duration
	// ClusterID, when set, is the cluster ID written on first start (as
	// kafka-storage.sh format --cluster-id does); a later start with a
	// different one fails. Empty draws a random one.
	ClusterID string
	// Broker is the static broker config (server.properties). The controller
	// reads num.partitions, default.replication.factor, delete.topic.enable,
	// auto.leader.rebalance.enable, leader.imbalance.* and samsa.balancer.*
	// (under their dynamic values) from it and
	// resolves topic configs over it. The
	// zero Values means Kafka's defaults.
	Broker config.Values
	// LookupHost resolves the name of an ip quota entity that is not an IP
	// address, which AlterClientQuotas accepts when it resolves, as Kafka
	// does. Nil uses net.DefaultResolver.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// ReplicaSizes gives the balancer each partition's size; nil balances
	// replica and leader counts only (samsa.balancer.bytes.spread is then
	// noted as not applied).
	ReplicaSizes ReplicaSizes
	// Logger defaults to slog.Default(); lines carry component=controller.
	Logger *slog.Logger
	// Clock defaults to clock.Real.
	Clock clock.Clock
}

// Voter is one member of controller.quorum.voters.
type Voter struct {
	ID   model.NodeID
	Addr string // host:port of its controller listener
}

// Controller is the active controller of a one-voter KRaft-style quorum: it
// owns the Raft node, validates metadata writes, commits them as records and
// publishes the resulting image. Every method is safe for concurrent use.
type Controller struct {
	cfg    Config
	log    *slog.Logger
	clock  clock.Clock
	static config.Values

	raft      *raft.Raft
	fsm       *fsm
	store     *raftboltdb.BoltStore
	transport raft.Transport
	stream    *streamLayer // nil unless Voters is set
	// observer: a Raft non-voter (a broker-only node), not among Voters.
	observer bool
	fs       vfs.FS // the metadata directory's, for the directory syncs: vfs.OS but in tests
	tasks    *task.Group
	// incarnation identifies this process's registration of the local broker.
	incarnation string
	// ready receives the outcome of the first election's setup.
	live liveness // heartbeats, on the active controller (brokers.go)
	// former is the voter that led the quorum before this node
	// (former_leader.go).
	former formerLeader
	// caughtUp: this node won the last election it saw and has applied the
	// whole log since (onElected); Active needs it.
	caughtUp atomic.Bool
	// voterChange: an AddVoter or RemoveVoter runs (voters.go); one at a
	// time.
	voterChange atomic.Bool
	// bal is the automatic balancer (balancer.go).
	bal       *balancer
	ready     chan error
	readyOnce sync.Once

	// writeMu serialises writes from validation to commit. A write checks
	// its request against the current image and the next write must see the
	// result: otherwise two CreateTopics of one name could both pass the
	// "already exists" check before either commits.
	writeMu sync.Mutex
	closed  bool // guarded by writeMu

	closeOnce sync.Once
	closeErr  error
}

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("controller: closed")

// defaultApplyTimeout bounds a write whose context has no deadline.
const defaultApplyTimeout = 30 * time.Second

// Open starts the Raft node, bootstraps a one-voter cluster on first start,
// waits until this node is leader and has applied the whole log, and writes
// the cluster ID, feature levels and the local broker's registration. It
// returns when writes can be made, or when ctx is done.
func Open(ctx context.Context, cfg Config) (*Controller, error) {
	c, err := newController(cfg)
	if err != nil {
		return nil, err
	}
	if err := c.open(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// New builds a controller without starting it, so that a caller serving
// the controller listener can hand it Raft connections (ServeRaft) before
// and while Start runs: with several voters, Start waits for a quorum.
func New(cfg Config) (*Controller, error) { return newController(cfg) }

// Start is Open's second half, for a controller made by New. On error the
// controller is closed.
func (c *Controller) Start(ctx context.Context) error { return c.open(ctx) }

func (c *Controller) open(ctx context.Context) error {
	start := c.clock.Now()
	if err := c.startRaft(); err != nil {
		c.Close()
		return err
	}
	c.tasks.Go(c.watchLeadership)
	if c.observer && !c.cfg.Joining {
		// A non-voter knows no leader until the active controller adds it,
		// which its broker's registration asks for: it cannot wait here.
		c.log.Debug("controller started as a non-voter", "node_id", c.cfg.NodeID)
		return nil
	}
	if c.stream != nil {
		c.tasks.Go(c.watchQuorumLeader)
		c.tasks.Go(c.watchCaughtUp)
		c.tasks.Go(c.watchSessions)
	}
	if c.static.Bool("auto.leader.rebalance.enable") {
		c.tasks.Go(c.watchLeaderBalance)
	}
	if c.DelegationTokensEnabled() {
		c.tasks.Go(c.watchDelegationTokens)
	}
	// Always watched: samsa.balancer.enable is dynamic.
	c.tasks.Go(c.watchBalancer)
	if c.cfg.Joining {
		// A controller joining the quorum runs every watcher a voter runs,
		// for the day AddVoter makes it one and it is elected, but knows no
		// leader until the active controller adds it: it cannot wait here.
		c.log.Info("controller started outside the voters; AddRaftVoter adds it to the quorum", "node_id", c.cfg.NodeID, "raft_addr", c.cfg.RaftAddr)
		return nil
	}
	var err error
	select {
	case err = <-c.ready:
	case <-ctx.Done():
		err = fmt.Errorf("controller: wait for election: %w", ctx.Err())
	}
	if err != nil {
		c.Close()
		return err
	}
	img := c.Image()
	c.log.Debug("controller ready", "cluster_id", img.ClusterID(), "node_id", c.cfg.NodeID,
		"offset", img.Offset(), "topics", len(img.Topics()), "elapsed", c.clock.Now().Sub(start))
	return nil
}

func newController(cfg Config) (*Controller, error) {
	if cfg.NodeID < 0 {
		return nil, fmt.Errorf("controller: node id %d is negative", cfg.NodeID)
	}
	if cfg.Dir == "" {
		return nil, errors.New("controller: no metadata directory")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 9 * time.Second
	}
	static := cfg.Broker
	if static.IsZero() {
		var err error
		if static, err = config.Parse(config.Broker, nil); err != nil {
			return nil, fmt.Errorf("controller: default broker config: %w", err)
		}
	}
	incarnation, err := metadata.NewUUID(rand.Reader)
	if err != nil {
		return nil, err
	}
	var stream *streamLayer
	observer := false
	if cfg.network() {
		self, voter, err := checkVoters(cfg.votersToBootstrap(), cfg.NodeID)
		if err != nil {
			return nil, err
		}
		addr := self.Addr
		if !voter {
			if cfg.RaftAddr == "" {
				return nil, notAVoter(cfg)
			}
			addr, observer = cfg.RaftAddr, true
		}
		stream = newStreamLayer(addr, cfg.DialRaft)
	}
	return &Controller{stream: stream, observer: observer,
		cfg: cfg, log: cfg.Logger.With("component", "controller"), clock: cfg.Clock, static: static,
		fsm: newFSM(cfg.Logger.With("component", "controller")), tasks: task.NewGroup(context.Background()), fs: vfs.OS,
		incarnation: metadata.FormatUUID(incarnation), ready: make(chan error, 1), bal: newBalancer(cfg.Logger),
	}, nil
}

// checkVoters refuses a quorum that names a node twice, and returns this
// node's entry and whether there is one.
func checkVoters(voters []Voter, self model.NodeID) (Voter, bool, error) {
	seen := map[model.NodeID]bool{}
	var me Voter
	found := false
	for _, v := range voters {
		if seen[v.ID] {
			return me, false, fmt.Errorf("controller: controller.quorum.voters names node %d twice", v.ID)
		}
		seen[v.ID] = true
		if v.ID == self {
			me, found = v, true
		}
	}
	return me, found, nil
}

// ServeRaft hands a connection on the controller listener to Raft; the
// caller has read RaftPreamble from it. It returns once Raft has taken the
// connection or the controller is closed (and then closes it).
func (c *Controller) ServeRaft(conn net.Conn) {
	if c.stream == nil {
		conn.Close()
		return
	}
	c.stream.serve(conn)
}

// Observer reports whether this node follows the quorum without a vote (a
// broker-only node).
func (c *Controller) Observer() bool { return c.observer }

// Quorum reports whether this controller is one of several voters.
func (c *Controller) Quorum() bool { return len(c.cfg.Voters) > 1 }

// raftDir is where the bolt store and snapshots live.
func (c *Controller) raftDir() string { return filepath.Join(c.cfg.Dir, "raft") }

// Image returns the current metadata image. It is immutable; the call takes
// no lock.
func (c *Controller) Image() *metadata.Image { return c.fsm.image() }

// Changed returns a channel that is closed as soon as the image changes
// after the call. To follow the image, take the channel first, then the
// image, handle the image, and wait on the channel:
//
//	for {
//		ch := c.Changed()
//		handle(c.Image()) // compare with the last one, e.g. metadata.DiffTopics
//		select { case <-ch: case <-ctx.Done(): return }
//	}
//
// Taking the channel first means no change is missed; a follower that is
// slower than the writes sees the latest image, not every one in between,
// which is what reconciling local state against metadata needs. Nothing is
// queued, so a slow follower never holds up the controller.
func (c *Controller) Changed() <-chan struct{} { return c.fsm.state.Load().changed }

// NodeID is this node's ID.
func (c *Controller) NodeID() model.NodeID { return c.cfg.NodeID }

// ControllerID is the node ID of the active controller, -1 when there is
// none (during an election). In single-node mode it is this node.
func (c *Controller) ControllerID() model.NodeID {
	_, id := c.raft.LeaderWithID()
	n, ok := serverNode(id)
	if !ok {
		return -1
	}
	return n
}

// Close shuts Raft down and closes its store and transport. Writes in
// flight finish first; later writes fail with NOT_CONTROLLER.
func (c *Controller) Close() error {
	c.closeOnce.Do(func() {
		c.resign()
		c.tasks.Stop()
		// Under the write lock no write is between validation and commit
		// while Raft goes away; later writes find the controller closed.
		c.writeMu.Lock()
		var errs []error
		if c.raft != nil {
			errs = append(errs, c.raft.Shutdown().Error())
		}
		if g, ok := c.transport.(*heartbeatGuard); ok {
			g.stop() // before the store closes: see heartbeatGuard
		}
		if cl, ok := c.transport.(raft.WithClose); ok {
			errs = append(errs, cl.Close())
		}
		if c.store != nil {
			errs = append(errs, c.store.Close())
		}
		c.closed = true
		c.writeMu.Unlock()
		if err := errors.Join(errs...); err != nil {
			c.closeErr = fmt.Errorf("controller: close: %w", err)
		}
	})
	return c.closeErr
}

// resign hands the quorum's leadership to another voter before this one
// stops, as Kafka's active controller resigns (EndQuorumEpoch) on
// shutdown. Without it the others wait out an election timeout, and what
// this leader committed last (a controlled shutdown's leadership moves)
// reaches them only once a new leader commits: a follower learns the
// commit index from the leader's next message, and there is none. Raft's
// transfer waits until the target has the whole log, then tells it to
// stand for election at once.
func (c *Controller) resign() {
	if c.raft == nil || c.raft.State() != raft.Leader {
		return
	}
	cf := c.raft.GetConfiguration()
	if cf.Error() != nil {
		return
	}
	voters := 0
	for _, s := range cf.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	if voters < 2 {
		return
	}
	start := time.Now()
	if err := c.raft.LeadershipTransfer().Error(); err != nil {
		c.log.Warn("could not hand the controller leadership over before stopping", "err", err)
		return
	}
	c.log.Info("handed the controller leadership over before stopping", "took", time.Since(start))
}

// watchLeadership runs the setup of each election won and reports the first
// outcome to Open. With one voter, leadership is won once and kept.
func (c *Controller) watchLeadership(ctx context.Context) {
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case leader := <-c.raft.LeaderCh():
			if !leader {
				c.caughtUp.Store(false)
				c.former.set(0, false)
				c.log.Warn("lost controller leadership")
				continue
			}
			err := c.onElected(ctx)
			if first {
				c.reportReady(err)
				first = false
			} else if err != nil {
				c.log.Error("controller setup after election failed", "err", err)
			}
		}
	}
}

// reportReady tells Open the outcome of start-up, once.
func (c *Controller) reportReady(err error) {
	c.readyOnce.Do(func() { c.ready <- err })
}

// watchCaughtUp reports a quorum member ready once it knows a leader and
// has applied the log that leader has committed, cluster ID included: the
// image it then serves is no older than the quorum's at the time.
func (c *Controller) watchCaughtUp(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond) // Raft runs on the wall clock too
	defer tick.Stop()
	for {
		ch := c.Changed()
		addr, _ := c.raft.LeaderWithID()
		if addr != "" && c.Image().ClusterID() != "" && c.raft.AppliedIndex() >= c.raft.CommitIndex() {
			c.reportReady(nil)
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// onElected makes the image whole before the first write: a barrier waits
// until every committed entry, including those replayed from the log on
// restart, is applied, so "no cluster ID yet" really means a first start.
//
// Writes wait behind it (writeMu) and are refused until it is done: a new
// leader's FSM may not have applied what the old one committed, and a write
// checked against that image (a topic that "does not exist", the next
// producer-ID block) would be wrong.
func (c *Controller) onElected(ctx context.Context) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.raft.Barrier(c.applyTimeout(ctx)).Error(); err != nil {
		return fmt.Errorf("controller: barrier after election: %w", err)
	}
	var ids []model.NodeID
	for _, b := range c.Image().Brokers() {
		ids = append(ids, b.NodeID)
	}
	c.sessionsOnElection(ids)
	recs, err := c.setupRecords(c.Image())
	if err == nil && len(recs) > 0 {
		err = c.proposeLocked(ctx, recs)
	}
	if err == nil {
		c.caughtUp.Store(true)
	}
	return err
}

// setupRecords returns what a newly elected controller must write: the
// cluster ID, the first feature levels and the bootstrap records
// (BootstrapRecordsFile) on first start, and the local broker's
// registration when it differs. A later start refuses metadata whose
// finalized feature levels this version does not support.
func (c *Controller) setupRecords(img *metadata.Image) ([]metadata.Record, error) {
	var recs []metadata.Record
	switch id := img.ClusterID(); {
	case id == "":
		if id = c.cfg.ClusterID; id == "" {
			uuid, err := metadata.NewUUID(rand.Reader)
			if err != nil {
				return nil, err
			}
			id = metadata.FormatUUID(uuid)
		}
		recs = append(recs, metadata.ClusterRecord{ClusterID: id})
		// The features start at this version's defaults, once: later
		// levels are the operator's (UpdateFeatures), so a new version of
		// Samsa does not raise them by itself, as Kafka's does not.
		for _, f := range metadata.BootstrapFeatures() {
			recs = append(recs, f)
		}
		boot, err := readBootstrapRecords(c.fs, c.cfg.Dir)
		if err != nil {
			return nil, err
		}
		recs = append(recs, boot...)
	case c.cfg.ClusterID != "" && c.cfg.ClusterID != id:
		return nil, fmt.Errorf("controller: metadata in %s belongs to cluster %s, not %s", c.cfg.Dir, id, c.cfg.ClusterID)
	default:
		if err := checkSupportedLevels(img); err != nil {
			return nil, err
		}
	}
	if c.stream != nil {
		// In a quorum every broker registers itself over the controller
		// listener (BrokerRegistration), the local one too.
		return recs, nil
	}
	reg := metadata.BrokerRegistration{NodeID: c.cfg.NodeID, Incarnation: c.incarnation, Rack: c.cfg.Rack, Endpoints: c.cfg.Endpoints,
		Features: metadata.SupportedFeatures(), LogDirs: c.cfg.LogDirs}
	if have, ok := img.Broker(c.cfg.NodeID); !ok || have.Incarnation != reg.Incarnation || have.Fenced ||
		have.Rack != reg.Rack || !slices.Equal(have.Endpoints, reg.Endpoints) || !slices.Equal(have.Features, reg.Features) ||
		!slices.Equal(have.LogDirs, reg.LogDirs) {
		recs = append(recs, reg)
	}
	return recs, nil
}

// applyTimeout is how long a Raft operation may wait to be enqueued: until
// ctx's deadline, else defaultApplyTimeout.
func (c *Controller) applyTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(d.Sub(c.clock.Now()), time.Millisecond)
	}
	return defaultApplyTimeout
}

// proposeLocked commits recs as one Raft entry and returns once the FSM has
// applied it, so the next Image shows the change. Callers hold writeMu.
func (c *Controller) proposeLocked(ctx context.Context, recs []metadata.Record) error {
	if c.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := metadata.EncodeBatch(recs)
	if err != nil {
		return err
	}
	f := c.raft.Apply(data, c.applyTimeout(ctx))
	if err := f.Error(); err != nil {
		return fmt.Errorf("controller: commit: %w", err)
	}
	if c.stream != nil {
		// Tell the other nodes at once. A follower learns the commit from
		// the leader's next AppendEntries, which Raft sends only with a new
		// entry or after CommitTimeout (50-100 ms): brokers would lag that
		// long behind a topic creation whose client already has its
		// answer, and clients that do not retry UNKNOWN_TOPIC_OR_PARTITION
		// (kafka-go's writer) fail. A barrier is a new entry that applies
		// nothing and carries the commit; nothing waits for it.
		c.raft.Barrier(c.applyTimeout(ctx))
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// failure is a per-item Kafka error with its message.
type failure struct {
	err *kerr.Error
	msg string
}

func fail(err *kerr.Error, format string, args ...any) *failure {
	return &failure{err: err, msg: fmt.Sprintf(format, args...)}
}

func (f *failure) code() int16 {
	if f == nil {
		return 0
	}
	return f.err.Code
}

func (f *failure) message() string {
	if f == nil {
		return ""
	}
	return f.msg
}

// proposeFailure maps a failed commit to the error each item gets.
func proposeFailure(err error) *failure {
	switch {
	case errors.Is(err, ErrClosed), errors.Is(err, ErrNotActive), errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, context.Canceled):
		return fail(kerr.NotController, "the controller is not available: %v", err)
	case errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, context.DeadlineExceeded):
		return fail(kerr.RequestTimedOut, "timed out committing metadata: %v", err)
	}
	return fail(kerr.UnknownServerError, "%v", err)
}

// configFailure maps an internal/config error to Kafka's code for it.
func configFailure(err error) *failure {
	if errors.Is(err, config.ErrInvalidRequest) {
		return fail(kerr.InvalidRequest, "%v", err)
	}
	return fail(kerr.InvalidConfig, "%v", err)
}

// brokerValues is the local broker's config with the image's dynamic configs
// layered on, which is what topic configs fall back to.
func (c *Controller) brokerValues(img *metadata.Image) config.Values {
	v, err := c.static.WithDynamic(img.BrokerConfig(nodeResource(c.cfg.NodeID)), img.BrokerConfig(""))
	if err != nil {
		// The dynamic configs were validated when written; a catalog change
		// since could refuse them. Static values are the safe fallback.
		c.log.Warn("dynamic broker configs ignored", "err", err)
		return c.static
	}
	return v
}

func nodeResource(id model.NodeID) string { return strconv.Itoa(int(id)) }

// serverNode is the node a Raft server ID names (nodeResource's inverse);
// false for an ID that is not a node ID (none is, but Raft's IDs are
// strings).
func serverNode(id raft.ServerID) (model.NodeID, bool) {
	n, err := strconv.ParseInt(string(id), 10, 32)
	return model.NodeID(n), err == nil
}

// mkdirRaft creates the Raft directory and the metadata directory above it
// if missing, each synced into its parent: bolt and the snapshot store sync
// their files, not the directories that hold them, and a crash must not lose
// the metadata log a broker has acknowledged writes to.
func (c *Controller) mkdirRaft() error {
	if err := vfs.MkdirAllDurable(c.fs, c.raftDir()); err != nil {
		return fmt.Errorf("controller: create %s: %w", c.raftDir(), err)
	}
	return nil
}

// Active reports whether this node is the active controller: the Raft
// leader, caught up with the log it leads (onElected), so the image its
// writes are checked against holds every committed record.
func (c *Controller) Active() bool { return c.raft.State() == raft.Leader && c.caughtUp.Load() }

// CommitLag is how many entries of the metadata log this node knows to be
// committed and has not applied to its image yet (Raft's commit index less
// its applied index): a node that falls behind the quorum shows it here.
// It is 0 before Start.
func (c *Controller) CommitLag() int64 {
	if c.raft == nil {
		return 0
	}
	return max(int64(c.raft.CommitIndex())-int64(c.raft.AppliedIndex()), 0)
}

// ErrNotActive is returned by writes to a controller that is not active.
var ErrNotActive = errors.New("controller: not the active controller")

// checkWritableLocked refuses a write to a closed controller or one that is
// not active. Callers hold writeMu.
func (c *Controller) checkWritableLocked() error {
	switch {
	case c.closed:
		return ErrClosed
	case !c.Active():
		return ErrNotActive
	}
	return nil
}
