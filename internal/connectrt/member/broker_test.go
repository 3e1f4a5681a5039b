package member

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt/api"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/task"
)

// The group coordinator in these tests is a real Samsa broker: cmd/samsa
// built once and started as "samsa serve", shared by the tests of this
// package and killed when they end.
func TestMain(m *testing.M) {
	code := m.Run()
	brokerOnce.stop()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

var (
	brokerServingRE = regexp.MustCompile(`samsa serving.*`)
	listenerRE      = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	brokerOnce      sharedBroker
)

type sharedBroker struct {
	once  sync.Once
	addr  string
	err   error
	serve *devcluster.Serve
	dir   string
}

func (b *sharedBroker) stop() {
	if b.serve != nil {
		b.serve.Kill()
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// broker answers the shared broker's address, starting it on first use:
// no initial rebalance delay and a 1s minimum session timeout, so that
// rebalances in the tests take what the members' settings make them take.
func broker(t *testing.T) string {
	t.Helper()
	b := &brokerOnce
	b.once.Do(func() {
		bin, err := devcluster.BuildOnce(context.Background())
		if err != nil {
			b.err = err
			return
		}
		if b.dir, b.err = os.MkdirTemp("", "member-broker"); b.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		serve, found, err := devcluster.StartServe(ctx, bin, []string{
			"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
			"--override", "group.initial.rebalance.delay.ms=0", "--override", "group.min.session.timeout.ms=1000",
			"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(b.dir, "data"),
		}, brokerServingRE)
		if err != nil {
			b.err = err
			return
		}
		b.serve = serve
		m := listenerRE.FindStringSubmatch(found[0][0])
		if m == nil {
			b.err = fmt.Errorf("no PLAINTEXT listener in %q", found[0][0])
			return
		}
		b.addr = m[1]
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.addr
}

// cluster is what the test's workers run, seen all at once: every
// Assigned checks that nothing it starts runs on another worker at that
// moment (the cooperative protocol's promise: revoked before reassigned).
type cluster struct {
	t        *testing.T
	addr     string
	group    string
	cfg      Config
	g        *task.Group
	mu       sync.Mutex
	config   Snapshot              // the "config topic"
	running  map[string][]string   // worker -> connectors and tasks it runs
	latest   map[string]Assignment // worker -> its last assignment
	overlaps []string
	revokes  int // Revoke calls with something to stop
	// overlapsAllowed: the test makes a window in which two workers may
	// run the same work (a group turning eager).
	overlapsAllowed bool
	workers         map[string]*worker
}

func newCluster(t *testing.T, group string, cfg Config, config Snapshot) *cluster {
	return newClusterAt(t, broker(t), group, cfg, config)
}

func newClusterAt(t *testing.T, addr, group string, cfg Config, config Snapshot) *cluster {
	c := &cluster{
		t: t, addr: addr, group: group, cfg: cfg, config: config,
		g:       task.NewGroup(context.Background()),
		running: map[string][]string{}, latest: map[string]Assignment{}, workers: map[string]*worker{},
	}
	t.Cleanup(func() {
		for _, w := range c.workers {
			w.cancel()
		}
		c.g.Stop()
		for _, w := range c.workers {
			w.client.Close()
		}
		if len(c.overlaps) > 0 && !c.overlapsAllowed {
			t.Errorf("work ran on two workers at once: %v", c.overlaps)
		}
	})
	return c
}

func names(connectors []string, tasks []api.TaskID) []string {
	out := slices.Clone(connectors)
	for _, t := range tasks {
		out = append(out, t.String())
	}
	return out
}

// worker is one member with a handler that reports to the cluster.
type worker struct {
	c      *cluster
	name   string
	client *kgo.Client
	m      *Member
	cancel context.CancelFunc
	done   chan error

	mu     sync.Mutex
	offset int64 // the config offset this worker has read to
	// onMismatch is called with a failed assignment; it stands for the
	// worker reading the config topic to its end.
	onMismatch func(a Assignment)
	all        []Assignment
	lastAt     time.Time // when the last assignment came
}

func (c *cluster) start(name string, offset int64) *worker {
	c.t.Helper()
	client, err := kgo.NewClient(kgo.SeedBrokers(c.addr))
	if err != nil {
		c.t.Fatal(err)
	}
	w := &worker{c: c, name: name, client: client, offset: offset, done: make(chan error, 1)}
	cfg := c.cfg
	cfg.GroupID, cfg.URL = c.group, "http://"+name+":8083"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("worker", name)
	}
	if w.m, err = New(client, cfg, w); err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	c.mu.Lock()
	c.workers[name] = w
	c.mu.Unlock()
	c.g.Go(func(context.Context) {
		err := w.m.Run(ctx)
		if err != nil {
			c.t.Logf("%s: Run: %v", name, err)
		}
		w.done <- err
	})
	return w
}

func (w *worker) Snapshot() Snapshot {
	w.c.mu.Lock()
	s := w.c.config
	w.c.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	s.Offset = w.offset
	return s
}

func (w *worker) Revoke(connectors []string, tasks []api.TaskID) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	gone := names(connectors, tasks)
	if len(gone) > 0 {
		w.c.revokes++
	}
	w.c.running[w.name] = slices.DeleteFunc(w.c.running[w.name], func(n string) bool { return slices.Contains(gone, n) })
}

func (w *worker) Assigned(a Assignment) {
	w.mu.Lock()
	w.all = append(w.all, a)
	w.lastAt = time.Now()
	onMismatch := w.onMismatch
	w.mu.Unlock()
	if a.Error != NoError {
		if onMismatch != nil {
			onMismatch(a)
		}
		return
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	for _, n := range names(a.NewConnectors, a.NewTasks) {
		for other, run := range w.c.running {
			if other != w.name && slices.Contains(run, n) {
				w.c.overlaps = append(w.c.overlaps, fmt.Sprintf("%s started %s while %s ran it", w.name, n, other))
			}
		}
	}
	w.c.running[w.name] = names(a.Connectors, a.Tasks)
	w.c.latest[w.name] = a
}

// stable says whether the named workers run every configured connector
// and task exactly once, balanced within one, at one generation with no
// follow-up rebalance pending.
func (c *cluster) stable(workers ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	want := names(c.config.Connectors, c.config.Tasks)
	owner := map[string]string{}
	var gen int32 = -1
	minC, maxC, minT, maxT := 1<<30, -1, 1<<30, -1
	for _, name := range workers {
		a, ok := c.latest[name]
		if !ok {
			return fmt.Errorf("%s has no assignment", name)
		}
		if gen != -1 && a.Generation != gen {
			return fmt.Errorf("generations differ: %d and %d", gen, a.Generation)
		}
		gen = a.Generation
		if a.Delay > 0 || len(a.RevokedConnectors)+len(a.RevokedTasks) > 0 {
			return fmt.Errorf("%s has a follow-up rebalance pending", name)
		}
		for _, n := range c.running[name] {
			if o, dup := owner[n]; dup {
				return fmt.Errorf("%s runs on %s and %s", n, o, name)
			}
			owner[n] = name
		}
		minC, maxC = min(minC, len(a.Connectors)), max(maxC, len(a.Connectors))
		minT, maxT = min(minT, len(a.Tasks)), max(maxT, len(a.Tasks))
	}
	for _, n := range want {
		if _, ok := owner[n]; !ok {
			return fmt.Errorf("%s runs nowhere", n)
		}
	}
	if len(owner) != len(want) {
		return fmt.Errorf("%d things run, %d configured", len(owner), len(want))
	}
	if maxC-minC > 1 || maxT-minT > 1 {
		return fmt.Errorf("unbalanced: connectors %d..%d, tasks %d..%d", minC, maxC, minT, maxT)
	}
	return nil
}

// waitStable polls until the workers are stable, and answers how long
// that took.
func (c *cluster) waitStable(timeout time.Duration, workers ...string) time.Duration {
	c.t.Helper()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var err error
	for time.Since(start) < timeout {
		if err = c.stable(workers...); err == nil {
			return time.Since(start)
		}
		<-tick.C
	}
	c.t.Fatalf("not stable after %v: %v\nrunning: %v", timeout, err, c.snapshotRunning())
	return 0
}

func (c *cluster) snapshotRunning() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for k, v := range c.running {
		out[k] = slices.Clone(v)
	}
	return out
}

func (c *cluster) runs(worker string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.running[worker])
}

func testConfig(connectors, tasksEach int) Snapshot {
	s := Snapshot{Offset: 10}
	for i := range connectors {
		c := fmt.Sprintf("conn%d", i)
		s.Connectors = append(s.Connectors, c)
		for j := range tasksEach {
			s.Tasks = append(s.Tasks, api.TaskID{Connector: c, Task: j})
		}
	}
	return s
}

var fastGroup = Config{
	SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond,
	RebalanceTimeout: 10 * time.Second, ScheduledRebalanceMaxDelay: 2 * time.Second,
	RetryBackoff: 50 * time.Millisecond, RetryBackoffMax: 500 * time.Millisecond,
}

// TestMembersSplitMoveOnLeaveAndOnKill: three workers split the work; one
// leaves (Run ends, LeaveGroup) and its work moves after the scheduled
// delay; one is killed (its client closed, no LeaveGroup) and its work
// moves after the session timeout and the delay, never while it still
// runs it (it revokes its own work once its session has run out).
func TestMembersSplitMoveOnLeaveAndOnKill(t *testing.T) {
	for _, protocol := range []string{"sessioned", "compatible"} {
		t.Run(protocol, func(t *testing.T) {
			cfg := fastGroup
			cfg.Protocol = protocol
			c := newCluster(t, "connect-split-"+protocol, cfg, testConfig(3, 4))
			c.start("w1", 10)
			c.start("w2", 10)
			c.start("w3", 10)
			took := c.waitStable(30*time.Second, "w1", "w2", "w3")
			t.Logf("three workers split 3 connectors and 12 tasks in %v", took)
			if p := c.latest["w1"].Protocol; p != map[string]string{"sessioned": ProtocolSessioned, "compatible": ProtocolCompatible}[protocol] {
				t.Errorf("group protocol %q", p)
			}
			// A follower leaves: Run returns nil after LeaveGroup. (Were it
			// the leader, the new leader would hold no delay: see
			// TestLeaderKilled.)
			followers := c.followers("w1", "w2", "w3")
			leaving, stay := followers[0], slices.DeleteFunc([]string{"w1", "w2", "w3"}, func(n string) bool { return n == followers[0] })
			left := time.Now()
			c.workers[leaving].cancel()
			if err := <-c.workers[leaving].done; err != nil {
				t.Fatalf("Run after cancel: %v", err)
			}
			c.mu.Lock()
			delete(c.running, leaving) // it stopped its work as it stopped
			c.mu.Unlock()
			took = c.waitStable(30*time.Second, stay...)
			t.Logf("a leaving worker's work moved in %v (scheduled delay %v)", took, cfg.ScheduledRebalanceMaxDelay)
			if took >= cfg.SessionTimeout+cfg.ScheduledRebalanceMaxDelay {
				t.Errorf("a leaving worker's work took %v to move, as long as a dead one's: did it leave the group?", took)
			}
			if time.Since(left) < cfg.ScheduledRebalanceMaxDelay {
				t.Errorf("a departed worker's work moved after %v, before the scheduled delay %v", time.Since(left), cfg.ScheduledRebalanceMaxDelay)
			}

			// w4 joins and takes a share at once.
			c.start("w4", 10)
			all := append(slices.Clone(stay), "w4")
			took = c.waitStable(30*time.Second, all...)
			t.Logf("a joining worker got its share in %v", took)

			// A follower is killed: its client closes; its Run goes on
			// without a coordinator until its session runs out and it
			// revokes.
			victim := c.followers(all...)[0]
			if len(c.runs(victim)) == 0 {
				t.Fatalf("%s runs nothing", victim)
			}
			killed := time.Now()
			c.workers[victim].client.Close()
			took = c.waitStable(60*time.Second, slices.DeleteFunc(all, func(n string) bool { return n == victim })...)
			t.Logf("a killed worker's work moved in %v (session %v + scheduled delay %v)", took, cfg.SessionTimeout, cfg.ScheduledRebalanceMaxDelay)
			// The coordinator counts the session from the last heartbeat it
			// received, up to a heartbeat interval before the kill.
			if min := cfg.SessionTimeout + cfg.ScheduledRebalanceMaxDelay - cfg.HeartbeatInterval; time.Since(killed) < min {
				t.Errorf("a killed worker's work moved after %v, before session timeout + delay %v", time.Since(killed), min)
			}
			if left := c.runs(victim); len(left) != 0 {
				t.Errorf("the killed worker still runs %v", left)
			}
		})
	}
}

// followers answers the named workers that are not the leader.
func (c *cluster) followers(workers ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range workers {
		if a := c.latest[n]; a.MemberID != a.LeaderID {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		c.t.Fatal("no follower")
	}
	return out
}

// TestLeaderKilled: when the leader dies, the new leader has no memory of
// what the old one assigned (Kafka's leaders keep it in memory too), so
// the dead leader's work is unassigned and given away as soon as the
// coordinator removes it, with no scheduled delay. The dead leader must
// have stopped its work by then: it revokes a heartbeat interval before
// its session runs out.
func TestLeaderKilled(t *testing.T) {
	// The dead leader revokes a heartbeat interval before the coordinator
	// can expire it: a 1s margin here, for a loaded machine.
	cfg := fastGroup
	cfg.SessionTimeout, cfg.HeartbeatInterval = 3*time.Second, time.Second
	c := newCluster(t, "connect-leader-killed", cfg, testConfig(2, 3))
	c.start("w1", 10)
	c.waitStable(30*time.Second, "w1")
	c.start("w2", 10)
	c.waitStable(30*time.Second, "w1", "w2")
	killed := time.Now()
	c.workers["w1"].client.Close()
	took := c.waitStable(60*time.Second, "w2")
	t.Logf("a killed leader's work moved in %v (session %v)", took, cfg.SessionTimeout)
	if time.Since(killed) < cfg.SessionTimeout-cfg.HeartbeatInterval {
		t.Errorf("a killed leader's work moved after %v, before the session timeout", time.Since(killed))
	}
}

// TestConfigMismatch: a leader whose config offset is behind a member's
// answers CONFIG_MISMATCH to everyone; it catches up and the group
// rebalances to an assignment at the newer offset.
func TestConfigMismatch(t *testing.T) {
	c := newCluster(t, "connect-mismatch", fastGroup, testConfig(2, 2))
	w1 := c.start("w1", 10)
	c.waitStable(30*time.Second, "w1")
	if _, _, leader := w1.m.Leader(); !leader {
		t.Fatal("the only member is not the leader")
	}
	w1.mu.Lock()
	w1.onMismatch = func(a Assignment) {
		w1.mu.Lock()
		w1.offset = a.ConfigOffset // read the config topic to the offset the group needs
		w1.mu.Unlock()
	}
	w1.mu.Unlock()
	w2 := c.start("w2", 12)
	c.waitStable(30*time.Second, "w1", "w2")

	for _, w := range []*worker{w1, w2} {
		w.mu.Lock()
		var mismatch, final *Assignment
		for i := range w.all {
			if w.all[i].Error == ConfigMismatch {
				mismatch = &w.all[i]
			}
			final = &w.all[i]
		}
		w.mu.Unlock()
		// The leader always sees the mismatch; the follower may not: when
		// the leader rejoins (caught up) before the follower's SyncGroup
		// arrives, the coordinator answers that one REBALANCE_IN_PROGRESS.
		if (w == w1 && mismatch == nil) || (mismatch != nil && mismatch.ConfigOffset != 12) {
			t.Errorf("%s: no CONFIG_MISMATCH at offset 12: %+v", w.name, mismatch)
		}
		if final.Error != NoError || final.ConfigOffset != 12 {
			t.Errorf("%s: final assignment %+v, want no error at offset 12", w.name, final)
		}
	}
}

// TestEagerRevokesEverything: under the eager protocol every rebalance
// stops all work before joining, and the leader assigns it all afresh.
func TestEagerRevokesEverything(t *testing.T) {
	cfg := fastGroup
	cfg.Protocol = "eager"
	c := newCluster(t, "connect-eager", cfg, testConfig(2, 3))
	w1 := c.start("w1", 10)
	c.waitStable(30*time.Second, "w1")
	c.start("w2", 10)
	c.waitStable(30*time.Second, "w1", "w2")
	w1.mu.Lock()
	last := w1.all[len(w1.all)-1]
	w1.mu.Unlock()
	if last.Protocol != ProtocolEager {
		t.Errorf("protocol %q", last.Protocol)
	}
	if !slices.Equal(names(last.NewConnectors, last.NewTasks), names(last.Connectors, last.Tasks)) {
		t.Errorf("an eager assignment is all new: new %v, all %v", names(last.NewConnectors, last.NewTasks), names(last.Connectors, last.Tasks))
	}
}

// TestMixedProtocolsChooseEager: a worker that speaks only eager makes the
// whole group eager, as Kafka's protocol selection does.
func TestMixedProtocolsChooseEager(t *testing.T) {
	c := newCluster(t, "connect-mixed", fastGroup, testConfig(1, 2))
	c.overlapsAllowed = true // w2, the leader, may start before w1 has stopped
	c.start("w1", 10)
	c.waitStable(30*time.Second, "w1")
	c.cfg.Protocol = "eager"
	c.start("w2", 10)
	c.waitStable(30*time.Second, "w1", "w2")
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.latest["w1"].Protocol; p != ProtocolEager {
		t.Errorf("protocol %q, want %q", p, ProtocolEager)
	}
	if c.revokes == 0 {
		t.Error("w1 kept running its cooperative assignment when the group turned eager")
	}
}

// TestConfigChange: the config topic changes (a connector deleted, one
// added with more tasks); the workers read it and one asks for a
// rebalance: the deleted work is revoked, the new work assigned, and the
// group is balanced again.
func TestConfigChange(t *testing.T) {
	c := newCluster(t, "connect-config-change", fastGroup, testConfig(3, 2))
	w1 := c.start("w1", 10)
	c.start("w2", 10)
	c.waitStable(30*time.Second, "w1", "w2")
	c.mu.Lock()
	next := testConfig(4, 3)
	next.Connectors = slices.DeleteFunc(next.Connectors, func(n string) bool { return n == "conn0" })
	next.Tasks = slices.DeleteFunc(next.Tasks, func(t api.TaskID) bool { return t.Connector == "conn0" })
	c.config = next
	c.mu.Unlock()
	for _, w := range c.workers {
		w.mu.Lock()
		w.offset = 11
		w.mu.Unlock()
	}
	w1.m.Rejoin()
	took := c.waitStable(30*time.Second, "w1", "w2")
	t.Logf("a config change was applied in %v", took)
	for _, n := range []string{"w1", "w2"} {
		for _, r := range c.runs(n) {
			if strings.HasPrefix(r, "conn0") {
				t.Errorf("%s still runs %s", n, r)
			}
		}
		if a := c.latest[n]; a.ConfigOffset != 11 {
			t.Errorf("%s assigned at offset %d", n, a.ConfigOffset)
		}
	}
}
