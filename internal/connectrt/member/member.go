package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// Kafka's worker defaults (DistributedConfig).
const (
	DefaultSessionTimeout             = 10 * time.Second
	DefaultRebalanceTimeout           = 60 * time.Second
	DefaultHeartbeatInterval          = 3 * time.Second
	DefaultScheduledRebalanceMaxDelay = 5 * time.Minute
	DefaultRetryBackoff               = 100 * time.Millisecond // retry.backoff.ms
	DefaultRetryBackoffMax            = time.Second            // retry.backoff.max.ms
)

// NoScheduledRebalanceDelay is ScheduledRebalanceMaxDelay for Kafka's
// scheduled.rebalance.max.delay.ms=0 (zero means the default): lost work is
// reassigned in the rebalance that notices it.
const NoScheduledRebalanceDelay time.Duration = -1

// Config is a worker's group settings, with Kafka's worker config names.
type Config struct {
	GroupID string // group.id
	URL     string // this worker's REST URL, sent in its metadata
	// Protocol is connect.protocol: "sessioned" (the default), "compatible"
	// or "eager", case-insensitive as Kafka reads it.
	Protocol string
	// Zero means Kafka's default: session.timeout.ms 10s,
	// rebalance.timeout.ms 60s, heartbeat.interval.ms 3s.
	SessionTimeout, RebalanceTimeout, HeartbeatInterval time.Duration
	// ScheduledRebalanceMaxDelay is scheduled.rebalance.max.delay.ms
	// (zero: 5 minutes; NoScheduledRebalanceDelay: 0 ms).
	ScheduledRebalanceMaxDelay time.Duration
	// RetryBackoff and RetryBackoffMax bound the exponential backoff
	// between failed requests (retry.backoff.ms 100ms, retry.backoff.max.ms
	// 1s by default).
	RetryBackoff, RetryBackoffMax time.Duration
	Logger                        *slog.Logger
}

// Snapshot is the config topic as this worker has read it.
type Snapshot struct {
	Offset     int64
	Connectors []string
	Tasks      []api.TaskID
}

// Assignment is what one successful SyncGroup gave this worker.
type Assignment struct {
	// Error is NoError or ConfigMismatch: then the leader was behind some
	// member's config offset; nothing new is assigned, and the worker
	// rejoins once its config is read to ConfigOffset.
	Error             int16
	LeaderID          string
	LeaderURL         string
	ConfigOffset      int64
	Connectors        []string     // what this worker runs now (after revocations)
	Tasks             []api.TaskID // likewise
	RevokedConnectors []string     // stopped (Handler.Revoke returned) before this call
	RevokedTasks      []api.TaskID
	// NewConnectors and NewTasks are the part of Connectors and Tasks that
	// this sync added (all of them under the eager protocol).
	NewConnectors []string
	NewTasks      []api.TaskID
	// Delay is the scheduled rebalance delay: the member rejoins after it.
	Delay      time.Duration
	Generation int32
	MemberID   string
	// Protocol is the subprotocol the group chose: "sessioned",
	// "compatible" or "default" (eager).
	Protocol string
}

// Handler is the worker's side of membership. Its methods are called from
// Run's goroutine, one at a time; heartbeats go on meanwhile.
type Handler interface {
	// Snapshot is read whenever the member joins (its offset goes in the
	// metadata) and by the leader to assign.
	Snapshot() Snapshot
	// Revoke must return only when the connectors and tasks are stopped.
	Revoke(connectors []string, tasks []api.TaskID)
	// Assigned is called after each successful sync.
	Assigned(a Assignment)
}

// Member is one worker's membership of its Connect group.
type Member struct {
	client  *kgo.Client
	cfg     Config
	h       Handler
	log     *slog.Logger
	clk     clock.Clock
	rejoin  chan struct{}
	running atomic.Bool
	// lastContact is when the coordinator last showed this member is in
	// the group (unix nanoseconds); the heartbeat goroutine writes it.
	lastContact atomic.Int64

	mu struct {
		sync.Mutex
		leaderID, leaderURL, memberID string
	}

	// Owned by Run's goroutine.
	coordinator             int32 // -1: unknown
	memberID                string
	generation              int32
	protocol                string              // of the last completed generation
	current                 *ExtendedAssignment // what this worker runs; nil: none yet
	lastCompletedGeneration int32
	assignor                AssignorState
	needRejoin              bool
	rejoinAt                time.Time // a scheduled rejoin; zero: none
	retries                 int
	heartbeats              *heartbeater
}

// New validates cfg and answers a member; Run makes it join.
func New(client *kgo.Client, cfg Config, h Handler) (*Member, error) {
	if client == nil || h == nil {
		return nil, errors.New("member: a client and a handler are required")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Member{
		client: client, cfg: cfg, h: h, clk: clock.Real,
		log:         cfg.Logger.With("component", "connect-member", "group", cfg.GroupID),
		rejoin:      make(chan struct{}, 1),
		coordinator: -1, generation: -1, lastCompletedGeneration: -1,
		assignor: NewAssignorState(),
	}
	return m, nil
}

func (c Config) withDefaults() (Config, error) {
	if c.GroupID == "" {
		return c, errors.New("member: group.id is required")
	}
	if c.URL == "" {
		return c, errors.New("member: the worker's REST URL is required")
	}
	switch strings.ToLower(c.Protocol) {
	case "":
		c.Protocol = ProtocolSessioned
	case "sessioned", "compatible", "eager":
		c.Protocol = strings.ToLower(c.Protocol)
	default:
		return c, fmt.Errorf("member: unknown Connect protocol compatibility mode: %s (connect.protocol is eager, compatible or sessioned)", c.Protocol)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"session.timeout.ms", &c.SessionTimeout, DefaultSessionTimeout},
		{"rebalance.timeout.ms", &c.RebalanceTimeout, DefaultRebalanceTimeout},
		{"heartbeat.interval.ms", &c.HeartbeatInterval, DefaultHeartbeatInterval},
		{"retry.backoff.ms", &c.RetryBackoff, DefaultRetryBackoff},
		{"retry.backoff.max.ms", &c.RetryBackoffMax, DefaultRetryBackoffMax},
	} {
		switch {
		case *d.v < 0:
			return c, fmt.Errorf("member: %s must not be negative, got %v", d.name, *d.v)
		case *d.v == 0:
			*d.v = d.def
		}
	}
	switch {
	case c.ScheduledRebalanceMaxDelay == 0:
		c.ScheduledRebalanceMaxDelay = DefaultScheduledRebalanceMaxDelay
	case c.ScheduledRebalanceMaxDelay == NoScheduledRebalanceDelay:
		c.ScheduledRebalanceMaxDelay = 0
	case c.ScheduledRebalanceMaxDelay < 0:
		return c, fmt.Errorf("member: scheduled.rebalance.max.delay.ms must not be negative, got %v", c.ScheduledRebalanceMaxDelay)
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		return c, fmt.Errorf("member: heartbeat.interval.ms (%v) must be smaller than session.timeout.ms (%v)", c.HeartbeatInterval, c.SessionTimeout)
	}
	if c.RetryBackoffMax < c.RetryBackoff {
		c.RetryBackoffMax = c.RetryBackoff
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"session.timeout.ms", c.SessionTimeout}, {"rebalance.timeout.ms", c.RebalanceTimeout},
		{"scheduled.rebalance.max.delay.ms", c.ScheduledRebalanceMaxDelay},
	} {
		// The protocol carries these as int32 milliseconds.
		if d.v/time.Millisecond > math.MaxInt32 {
			return c, fmt.Errorf("member: %s must be at most %d ms, got %v", d.name, math.MaxInt32, d.v)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// Rejoin asks for a rebalance (the config topic changed, say). It never
// blocks.
func (m *Member) Rejoin() {
	select {
	case m.rejoin <- struct{}{}:
	default:
	}
}

// Leader answers the group's leader as the last assignment named it.
func (m *Member) Leader() (id, url string, isLeader bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.leaderID, m.mu.leaderURL, m.mu.leaderID != "" && m.mu.leaderID == m.mu.memberID
}

// errFatal marks errors Run returns: retrying cannot help (no access to
// the group, a group of another protocol type, a bad session timeout).
var errFatal = errors.New("member: fatal")

// Run joins the group and stays in it, rebalancing as needed, until ctx
// ends; then it leaves the group (LeaveGroup) and returns nil. It returns
// early only for a fatal error.
func (m *Member) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return errors.New("member: Run is already running")
	}
	defer m.running.Store(false)
	defer m.leaveGroup()
	m.needRejoin = true
	m.touch()
	for ctx.Err() == nil {
		err := m.step(ctx)
		if errors.Is(err, errFatal) {
			return err
		}
		if errors.Is(err, errRetryNow) {
			continue
		}
		if err != nil {
			m.log.Info("group request failed; retrying", "err", err, "backoff", m.backoff())
			m.sleep(ctx, m.backoff())
			m.retries++
			continue
		}
		m.retries = 0
	}
	return nil
}

// step does the next thing membership needs: find the coordinator, join,
// or heartbeat until something changes.
func (m *Member) step(ctx context.Context) error {
	m.checkSession()
	if m.coordinator < 0 {
		m.stopHeartbeats()
		if err := m.findCoordinator(ctx); err != nil {
			return err
		}
	}
	if m.needRejoin {
		return m.joinGroup(ctx)
	}
	if m.heartbeats == nil {
		m.startHeartbeats()
	}
	return m.waitStable(ctx)
}

func (m *Member) backoff() time.Duration {
	d := m.cfg.RetryBackoff
	for i := 0; i < m.retries && d < m.cfg.RetryBackoffMax; i++ {
		d *= 2
	}
	return min(d, m.cfg.RetryBackoffMax)
}

// sleep waits d, or less when the session check is due sooner.
func (m *Member) sleep(ctx context.Context, d time.Duration) {
	if m.current != nil {
		d = min(d, max(m.sessionLeft()+time.Millisecond, time.Millisecond))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-m.rejoin:
		m.needRejoin = true
	}
}

func (m *Member) touch() { m.lastContact.Store(m.clk.Now().UnixNano()) }

func (m *Member) sinceContact() time.Duration {
	return m.clk.Now().Sub(time.Unix(0, m.lastContact.Load()))
}

// sessionLeft is how long until checkSession revokes: a heartbeat
// interval before the session timeout runs out since the coordinator last
// answered, so that the work is stopped before the coordinator can remove
// this member and a leader hand its work to another worker.
func (m *Member) sessionLeft() time.Duration {
	return m.cfg.SessionTimeout - m.cfg.HeartbeatInterval - m.sinceContact()
}

// checkSession revokes everything this worker runs once the coordinator
// has not answered it for a session timeout less a heartbeat interval:
// soon after, the coordinator may remove it from the group, and a new
// leader (which holds no scheduled delay) may hand its work to others at
// once. Kafka's WorkerCoordinator revokes likewise, sooner: once it cannot
// find the coordinator within a heartbeat interval.
func (m *Member) checkSession() {
	if m.current == nil || m.sessionLeft() > 0 {
		return
	}
	w := m.current
	m.log.Warn("no answer from the group coordinator for nearly a session timeout; revoking this worker's assignment",
		"since", m.sinceContact(), "connectors", len(w.Connectors), "tasks", len(w.Tasks))
	if len(w.Connectors) > 0 || len(w.Tasks) > 0 {
		m.h.Revoke(w.Connectors, w.Tasks)
	}
	m.current = nil
	m.setLeader("", "")
	m.needRejoin = true
	m.coordinator = -1
}

// waitStable waits, heartbeating in the background, until a rebalance is
// needed or asked for, a scheduled rejoin is due, or the session check
// must run.
func (m *Member) waitStable(ctx context.Context) error {
	var session <-chan time.Time
	if m.current != nil {
		t := time.NewTimer(max(m.sessionLeft()+time.Millisecond, time.Millisecond))
		defer t.Stop()
		session = t.C
	}
	var scheduled <-chan time.Time
	if !m.rejoinAt.IsZero() {
		t := time.NewTimer(max(m.rejoinAt.Sub(m.clk.Now()), 0))
		defer t.Stop()
		scheduled = t.C
	}
	select {
	case <-ctx.Done():
	case <-m.rejoin:
		m.needRejoin = true
	case <-scheduled:
		m.log.Info("rejoining for a scheduled rebalance")
		m.rejoinAt = time.Time{}
		m.needRejoin = true
	case err := <-m.heartbeats.errs:
		m.heartbeats.stop()
		m.heartbeats = nil
		return m.onHeartbeatError(err)
	case <-session:
	}
	return nil
}
