package broker

// Consumer groups end to end: sarama's and kafka-go's group consumers
// splitting a topic, a member that dies without leaving, committed offsets
// across a broker restart, and static members (KIP-345) restarting without
// a rebalance. rawMember, at the end, drives the classic protocol by hand
// for what no client can be told to do on cue (stop heartbeating, commit
// with a chosen generation); badinput_groups_test.go uses it too.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/samsa-io/samsa/internal/config"
	kafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupBrokerValues is the static config of the group tests: no initial
// rebalance delay, and session timeouts allowed from one second so that a
// dead member is noticed within a test's patience.
func groupBrokerValues(t testing.TB) config.Values {
	t.Helper()
	v, err := LoadConfig("", map[string]string{
		"group.initial.rebalance.delay.ms": "0",
		"group.min.session.timeout.ms":     "1000",
		"group.max.session.timeout.ms":     "60000",
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// startGroupBroker starts a broker with groupBrokerValues on dir and
// returns once its group coordinator has loaded __consumer_offsets.
func startGroupBroker(t testing.TB, dir string) *Broker {
	t.Helper()
	b := startBrokerWith(t, Config{LogDir: dir, Values: groupBrokerValues(t)})
	select {
	case <-b.coordSync.ready:
	case <-time.After(e2eTimeout):
		t.Fatal("group coordinator did not load __consumer_offsets")
	}
	return b
}

// eventually polls cond until it holds; what names the awaited event.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// producePerPartition writes counts[p] records to each partition p, valued
// "tag-p-i" so that every record of a test is unique.
func producePerPartition(t *testing.T, b *Broker, topic, tag string, counts []int) {
	t.Helper()
	cl := newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	var recs []*kgo.Record
	for p, n := range counts {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "%s-%d-%d", tag, p, i)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

func describeGroup(t *testing.T, ctx context.Context, adm *kadm.Client, group string) kadm.DescribedGroup {
	t.Helper()
	dgs, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatalf("describe %s: %v", group, err)
	}
	dg := dgs[group]
	if dg.Err != nil && !errors.Is(dg.Err, kerr.GroupIDNotFound) {
		t.Fatalf("describe %s: %v", group, dg.Err)
	}
	return dg // a group not yet created is Dead
}

// assignedPartitions maps each member of a described group to its
// partitions of topic, sorted.
func assignedPartitions(t *testing.T, dg kadm.DescribedGroup, topic string) map[string][]int32 {
	t.Helper()
	out := map[string][]int32{}
	for _, m := range dg.Members {
		out[m.MemberID] = nil
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			t.Fatalf("group %s member %s: assignment is not a consumer assignment", dg.Group, m.MemberID)
		}
		for _, at := range a.Topics {
			if at.Topic == topic {
				out[m.MemberID] = slices.Sorted(slices.Values(at.Partitions))
			}
		}
	}
	return out
}

// evenlySplit reports whether a described group is Stable with members
// members that each own some of topic's partitions 0..partitions-1 and
// together own each exactly once.
func evenlySplit(t *testing.T, dg kadm.DescribedGroup, topic string, members, partitions int) bool {
	t.Helper()
	if dg.State != "Stable" || len(dg.Members) != members {
		return false
	}
	seen := map[int32]bool{}
	for _, ps := range assignedPartitions(t, dg, topic) {
		if len(ps) == 0 {
			return false
		}
		for _, p := range ps {
			if seen[p] || p < 0 || int(p) >= partitions {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == partitions
}

// committedOffsets is a group's committed offset for each partition of
// topic that has one.
func committedOffsets(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string) map[int32]int64 {
	t.Helper()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := map[int32]int64{}
	for p, o := range offs[topic] {
		if o.Err != nil {
			t.Fatalf("fetch offsets of %s: %s/%d: %v", group, topic, p, o.Err)
		}
		out[p] = o.At
	}
	return out
}

// groupCollector records what the members of a group consumed. done is
// closed once want distinct records are in.
type groupCollector struct {
	want int
	done chan struct{}
	mu   struct {
		sync.Mutex
		times   map[string]int            // value -> times consumed
		offsets map[int32][]int64         // partition -> offsets, in consumption order
		members map[int32]map[string]bool // partition -> members that consumed from it
		byMem   map[string]map[int32]bool // member -> partitions it consumed from
	}
}

func newGroupCollector(want int) *groupCollector {
	c := &groupCollector{want: want, done: make(chan struct{})}
	c.mu.times = map[string]int{}
	c.mu.offsets = map[int32][]int64{}
	c.mu.members = map[int32]map[string]bool{}
	c.mu.byMem = map[string]map[int32]bool{}
	return c
}

func (c *groupCollector) add(member string, p int32, offset int64, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.times[value]++
	c.mu.offsets[p] = append(c.mu.offsets[p], offset)
	if c.mu.members[p] == nil {
		c.mu.members[p] = map[string]bool{}
	}
	c.mu.members[p][member] = true
	if c.mu.byMem[member] == nil {
		c.mu.byMem[member] = map[int32]bool{}
	}
	c.mu.byMem[member][p] = true
	if len(c.mu.times) == c.want {
		close(c.done)
	}
}

// await waits until want distinct records are in.
func (c *groupCollector) await(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-c.done:
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("consumed %d distinct records of %d: %v", len(c.mu.times), c.want, ctx.Err())
	}
}

// count is how many records have been consumed from partitions ps.
func (c *groupCollector) count(ps ...int32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range ps {
		n += len(c.mu.offsets[p])
	}
	return n
}

// check verifies that every record was consumed exactly once and that
// partition p yielded exactly the offsets ranges[p][0] to ranges[p][1]-1,
// in order.
func (c *groupCollector) check(t *testing.T, ranges map[int32][2]int64) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for v, n := range c.mu.times {
		if n != 1 {
			t.Errorf("record %s consumed %d times", v, n)
		}
	}
	for p := range c.mu.offsets {
		if _, ok := ranges[p]; !ok {
			t.Errorf("partition %d: consumed %v, want nothing", p, c.mu.offsets[p])
		}
	}
	for p, r := range ranges {
		var want []int64
		for o := r[0]; o < r[1]; o++ {
			want = append(want, o)
		}
		if got := c.mu.offsets[p]; !slices.Equal(got, want) {
			t.Errorf("partition %d: consumed offsets %v, want %d..%d", p, got, r[0], r[1]-1)
		}
	}
}

// consumers returns, for each partition, the members that consumed from
// it, and for each member the partitions.
func (c *groupCollector) consumers() (map[int32][]string, map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byPart := map[int32][]string{}
	for p, ms := range c.mu.members {
		byPart[p] = slices.Sorted(maps.Keys(ms))
	}
	byMem := map[string][]int32{}
	for m, ps := range c.mu.byMem {
		byMem[m] = slices.Sorted(maps.Keys(ps))
	}
	return byPart, byMem
}

// clientErrors collects what group clients report from their own
// goroutines, for the test goroutine to fail on.
type clientErrors struct {
	mu   sync.Mutex
	errs []string
}

func (e *clientErrors) add(who string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, fmt.Sprintf("%s: %v", who, err))
}

// check fails the test on every error reported, except a rebalance in
// progress: the protocol's order to rejoin, which kafka-go logs as an
// error (a member's SyncGroup overtaken by the next member's join while
// the group forms), at a time of its choosing.
func (e *clientErrors) check(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, err := range e.errs {
		if strings.Contains(err, kafka.RebalanceInProgress.Error()) || strings.Contains(err, sarama.ErrRebalanceInProgress.Error()) {
			t.Logf("rejoin: %s", err)
			continue
		}
		t.Errorf("client error: %s", err)
	}
}

// checkTwoMemberSplit checks that each partition was consumed by one
// member only, and that both members consumed.
func checkTwoMemberSplit(t *testing.T, col *groupCollector) {
	t.Helper()
	byPart, byMem := col.consumers()
	for p, ms := range byPart {
		if len(ms) != 1 {
			t.Errorf("partition %d consumed by %v, want one member", p, ms)
		}
	}
	if len(byMem) != 2 {
		t.Errorf("members that consumed: %v, want both", byMem)
	}
}

// twoMemberGroupTest runs the scenario both client families share: two
// members join a group on a 4-partition topic and split it; only then are
// records produced, so no rebalance can hand a record to two members. Each
// record must arrive exactly once, the members' commits must reach the
// partitions' ends, and no client may report an error.
func twoMemberGroupTest(t *testing.T, start func(t *testing.T, addr, group, topic, name string, col *groupCollector, errs *clientErrors) (stop func())) {
	b := startGroupBroker(t, t.TempDir())
	const topic, group, perPartition = "split", "split-g", 50
	createTopic(t, b, topic, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	col := newGroupCollector(4 * perPartition)
	var errs clientErrors
	stops := []func(){
		start(t, b.Addr(), group, topic, "member-0", col, &errs),
		start(t, b.Addr(), group, topic, "member-1", col, &errs),
	}
	eventually(t, ctx, "two members splitting 4 partitions", func() bool {
		return evenlySplit(t, describeGroup(t, ctx, adm, group), topic, 2, 4)
	})
	producePerPartition(t, b, topic, "split", []int{perPartition, perPartition, perPartition, perPartition})
	col.await(t, ctx)
	ends := map[int32]int64{0: perPartition, 1: perPartition, 2: perPartition, 3: perPartition}
	eventually(t, ctx, "commits at the partitions' ends", func() bool {
		return maps.Equal(committedOffsets(t, ctx, adm, group, topic), ends)
	})
	for _, stop := range stops {
		stop()
	}
	if got := committedOffsets(t, ctx, adm, group, topic); !maps.Equal(got, ends) {
		t.Errorf("committed after the members left: %v, want %v", got, ends)
	}
	if dg := describeGroup(t, ctx, adm, group); dg.State != "Empty" || len(dg.Members) != 0 {
		t.Errorf("after the members left: state %s with %d members, want Empty", dg.State, len(dg.Members))
	}
	col.check(t, map[int32][2]int64{0: {0, perPartition}, 1: {0, perPartition}, 2: {0, perPartition}, 3: {0, perPartition}})
	checkTwoMemberSplit(t, col)
	errs.check(t)
}

func TestGroupSaramaTwoMembers(t *testing.T) {
	twoMemberGroupTest(t, startSaramaMember)
}

func TestGroupKafkaGoTwoMembers(t *testing.T) {
	twoMemberGroupTest(t, startKafkaGoMember)
}

type saramaGroupHandler struct {
	name string
	col  *groupCollector
}

func (saramaGroupHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaGroupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h saramaGroupHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.col.add(h.name, m.Partition, m.Offset, string(m.Value))
			sess.MarkMessage(m, "")
		case <-sess.Context().Done():
			return nil
		}
	}
}

// startSaramaMember runs a sarama consumer group member until stop.
func startSaramaMember(t *testing.T, addr, group, topic, name string, col *groupCollector, errs *clientErrors) (stop func()) {
	t.Helper()
	cfg := saramaConfig()
	cfg.ClientID = name
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 50 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cg, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	if err != nil {
		t.Fatalf("sarama consumer group: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// Consume returns at every rebalance; the member joins again.
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, saramaGroupHandler{name, col}); err != nil && ctx.Err() == nil {
				errs.add(name, err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for err := range cg.Errors() {
			errs.add(name, err)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := cg.Close(); err != nil {
				errs.add(name, fmt.Errorf("close: %w", err))
			}
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// startKafkaGoMember runs a kafka-go group reader until stop. With no
// CommitInterval, each ReadMessage commits before it returns.
func startKafkaGoMember(t *testing.T, addr, group, topic, name string, col *groupCollector, errs *clientErrors) (stop func()) {
	t.Helper()
	rd := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{addr},
		GroupID:           group,
		Topic:             topic,
		Dialer:            &kafka.Dialer{ClientID: name, Timeout: 10 * time.Second},
		MinBytes:          1,
		MaxBytes:          1 << 20,
		MaxWait:           100 * time.Millisecond,
		HeartbeatInterval: 100 * time.Millisecond,
		SessionTimeout:    6 * time.Second,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  100 * time.Millisecond,
		StartOffset:       kafka.FirstOffset,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			errs.add(name, fmt.Errorf(msg, args...))
		}),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := rd.ReadMessage(ctx)
			if err != nil {
				if ctx.Err() == nil {
					errs.add(name, err)
				}
				return
			}
			col.add(name, int32(m.Partition), m.Offset, string(m.Value))
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			if err := rd.Close(); err != nil {
				errs.add(name, fmt.Errorf("close: %w", err))
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// ownership follows the partitions of one topic a franz-go group member
// owns, through its rebalance callbacks.
type ownership struct {
	mu        sync.Mutex
	owned     map[int32]bool
	callbacks int           // rebalance callbacks so far
	changed   chan struct{} // closed and replaced at every callback
	at        time.Time     // when the last callback ran
}

func newOwnership() *ownership {
	return &ownership{owned: map[int32]bool{}, changed: make(chan struct{})}
}

// opts are the group options that feed o. They replace franz-go's
// default revoke, which commits: members using them commit themselves.
func (o *ownership) opts() []kgo.Opt {
	update := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			o.mu.Lock()
			defer o.mu.Unlock()
			for _, ps := range m {
				for _, p := range ps {
					if add {
						o.owned[p] = true
					} else {
						delete(o.owned, p)
					}
				}
			}
			o.callbacks++
			o.at = time.Now()
			close(o.changed)
			o.changed = make(chan struct{})
		}
	}
	return []kgo.Opt{kgo.OnPartitionsAssigned(update(true)), kgo.OnPartitionsRevoked(update(false)), kgo.OnPartitionsLost(update(false))}
}

// snapshot returns the owned partitions, sorted, and the callback count.
func (o *ownership) snapshot() ([]int32, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Keys(o.owned)), o.callbacks
}

// await waits for a callback after which cond holds of the owned
// partitions (or for cond to hold already) and returns when that callback
// ran.
func (o *ownership) await(t *testing.T, ctx context.Context, what string, cond func(owned []int32) bool) time.Time {
	t.Helper()
	for {
		o.mu.Lock()
		owned, at, changed := slices.Sorted(maps.Keys(o.owned)), o.at, o.changed
		o.mu.Unlock()
		if cond(owned) {
			return at
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: owns %v: %v", what, owned, ctx.Err())
		}
	}
}

// pollGroup polls a franz-go group member into col, committing after each
// poll, until the returned stop is called.
func pollGroup(t *testing.T, cl *kgo.Client, name string, col *groupCollector, errs *clientErrors) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			fs.EachError(func(topic string, p int32, err error) { errs.add(name, fmt.Errorf("%s/%d: %w", topic, p, err)) })
			fs.EachRecord(func(r *kgo.Record) { col.add(name, r.Partition, r.Offset, string(r.Value)) })
			if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
				errs.add(name, fmt.Errorf("commit: %w", err))
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// A member that stops heartbeating and drops its connection without
// LeaveGroup keeps its partitions for its session timeout, not less and
// not forever; then the surviving franz-go member owns every partition,
// resumes the dead member's partitions from what it committed, and
// consumes what was produced after the death: no gap, no repeat.
func TestGroupMemberKilledWithoutLeaving(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	const topic, group = "kill", "kill-g"
	const session = 2 * time.Second
	createTopic(t, b, topic, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))

	own := newOwnership()
	survivor := newFranz(t, b.Addr(), append(own.opts(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID("survivor"),
		kgo.SessionTimeout(10*time.Second), kgo.RebalanceTimeout(10*time.Second), kgo.HeartbeatInterval(100*time.Millisecond),
		// Partitions taken over join the next fetch, after the one in flight.
		kgo.FetchMaxWait(200*time.Millisecond))...)
	col := newGroupCollector(4*10 + 4*10 - 2*5)
	var errs clientErrors
	stopPolling := pollGroup(t, survivor, "survivor", col, &errs)
	own.await(t, ctx, "the survivor owning every partition", func(ps []int32) bool { return len(ps) == 4 })

	// The victim joins by hand, offering franz-go's protocol, and follows
	// the rebalances until the survivor's cooperative assignor gave it
	// partitions.
	victim := newRawMember(t, b, group, "consumer", session, consumerProtocol("cooperative-sticky", topic))
	victimParts := victim.followUntilAssigned(ctx, topic)
	own.await(t, ctx, "the survivor releasing the victim's partitions", func(ps []int32) bool {
		return len(ps)+len(victimParts) == 4 && !slices.ContainsFunc(ps, func(p int32) bool { return slices.Contains(victimParts, p) })
	})
	mine, _ := own.snapshot()

	// Records before the kill; the victim commits having handled half of
	// its partitions' records.
	producePerPartition(t, b, topic, "before", []int{10, 10, 10, 10})
	halfway := map[int32]int64{}
	for _, p := range victimParts {
		halfway[p] = 5
	}
	for p, code := range victim.commit(topic, halfway) {
		if code != 0 {
			t.Fatalf("victim's commit of partition %d: %v", p, kerr.ErrorForCode(code))
		}
	}
	eventually(t, ctx, "the survivor consuming its partitions", func() bool { return col.count(mine...) == 10*len(mine) })

	if code := victim.heartbeat(); code != 0 {
		t.Fatalf("victim's last heartbeat: %v", kerr.ErrorForCode(code))
	}
	killed := time.Now()
	victim.rc.nc.Close()

	// A closed connection is not a leave: the victim is still a member.
	dg := describeGroup(t, ctx, adm, group)
	if dg.State != "Stable" || len(dg.Members) != 2 || !slices.ContainsFunc(dg.Members, func(m kadm.DescribedGroupMember) bool { return m.MemberID == victim.memberID }) {
		t.Errorf("right after the kill: state %s, members %v; want Stable with the victim %s", dg.State, dg.Members, victim.memberID)
	}
	producePerPartition(t, b, topic, "after", []int{10, 10, 10, 10})

	// Not never: well within the test's patience.
	soon, cancelSoon := context.WithTimeout(ctx, session+10*time.Second)
	defer cancelSoon()
	reassigned := own.await(t, soon, "the survivor owning every partition again", func(ps []int32) bool { return len(ps) == 4 })
	took := reassigned.Sub(killed)
	t.Logf("partitions reassigned %v after the kill (session timeout %v)", took, session)
	// The member is removed at the first tick (100ms) past its session, and
	// the survivor rejoins at its next heartbeat (100ms): the rest is
	// slack for a loaded machine.
	if took < session-100*time.Millisecond || took > session+5*time.Second {
		t.Errorf("partitions reassigned %v after the kill, want about the session timeout %v", took, session)
	}
	col.await(t, ctx)
	stopPolling()
	ranges := map[int32][2]int64{}
	for p := range int32(4) {
		ranges[p] = [2]int64{0, 20}
	}
	for _, p := range victimParts {
		ranges[p] = [2]int64{5, 20}
	}
	col.check(t, ranges)
	if dg := describeGroup(t, ctx, adm, group); dg.State != "Stable" || len(dg.Members) != 1 {
		t.Errorf("after the reassignment: state %s with %d members, want Stable with the survivor", dg.State, len(dg.Members))
	}
	errs.check(t)
}

// consumeGroup runs a franz-go member of group until it has consumed want
// records, committing after each poll, then leaves the group.
func consumeGroup(t *testing.T, ctx context.Context, b *Broker, group, topic string, want int) map[int32][]*kgo.Record {
	t.Helper()
	cl := newFranz(t, b.Addr(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		// Partitions whose offsets need validating join the next fetch,
		// after the one in flight: keep its long poll short.
		kgo.HeartbeatInterval(100*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	got := map[int32][]*kgo.Record{}
	for n := 0; n < want; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group %s consumed %d of %d records (%s): %v", group, n, want, recordOffsets(got), ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("group %s: %s/%d: %v", group, topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			n++
		})
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatalf("group %s commit: %v", group, err)
		}
	}
	return got
}

// recordOffsets shows the offsets of records by partition.
func recordOffsets(recs map[int32][]*kgo.Record) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(recs)) {
		fmt.Fprintf(&b, "p%d:", p)
		for _, r := range recs[p] {
			fmt.Fprintf(&b, " %d", r.Offset)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// checkResumed checks that each partition p yielded exactly the offsets
// from[p] to end[p]-1.
func checkResumed(t *testing.T, got map[int32][]*kgo.Record, from, end map[int32]int64) {
	t.Helper()
	for p, e := range end {
		var offsets []int64
		for _, r := range got[p] {
			offsets = append(offsets, r.Offset)
		}
		var want []int64
		for o := from[p]; o < e; o++ {
			want = append(want, o)
		}
		if !slices.Equal(offsets, want) {
			t.Errorf("partition %d: consumed offsets %v, want %d..%d", p, offsets, from[p], e-1)
		}
	}
}

// A clean broker restart keeps every committed offset, the latest commit
// of each partition (not the highest), and the group resumes from them.
func TestGroupOffsetsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	b := startGroupBroker(t, dir)
	const topic, group = "keep", "keep-g"
	createTopic(t, b, topic, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Two rounds of consumption, so the log holds several commits per
	// partition, then a rewind of partition 1 by an admin.
	producePerPartition(t, b, topic, "one", []int{5, 10, 15})
	checkResumed(t, consumeGroup(t, ctx, b, group, topic, 30), map[int32]int64{}, map[int32]int64{0: 5, 1: 10, 2: 15})
	producePerPartition(t, b, topic, "two", []int{3, 0, 7})
	checkResumed(t, consumeGroup(t, ctx, b, group, topic, 10), map[int32]int64{0: 5, 1: 10, 2: 15}, map[int32]int64{0: 8, 1: 10, 2: 22})
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	rewind := kadm.Offsets{}
	rewind.Add(kadm.Offset{Topic: topic, Partition: 1, At: 4, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, group, rewind); err != nil || resp.Error() != nil {
		t.Fatalf("rewind partition 1: %v %v", err, resp.Error())
	}
	committed := map[int32]int64{0: 8, 1: 4, 2: 22}
	if got := committedOffsets(t, ctx, adm, group, topic); !maps.Equal(got, committed) {
		t.Fatalf("committed before the restart: %v, want %v", got, committed)
	}

	if err := b.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	b = startGroupBroker(t, dir)
	adm = kadm.NewClient(newFranz(t, b.Addr()))
	if got := committedOffsets(t, ctx, adm, group, topic); !maps.Equal(got, committed) {
		t.Fatalf("committed after the restart: %v, want %v", got, committed)
	}
	if dg := describeGroup(t, ctx, adm, group); dg.State != "Empty" || dg.ProtocolType != "consumer" {
		t.Errorf("after the restart: state %s, protocol type %q; want Empty, consumer", dg.State, dg.ProtocolType)
	}

	producePerPartition(t, b, topic, "three", []int{2, 2, 2})
	end := map[int32]int64{0: 10, 1: 12, 2: 24}
	checkResumed(t, consumeGroup(t, ctx, b, group, topic, 12), committed, end)
	if got := committedOffsets(t, ctx, adm, group, topic); !maps.Equal(got, end) {
		t.Errorf("committed after resuming: %v, want %v", got, end)
	}
}

// staticMember is a franz-go group member with a group.instance.id.
type staticMember struct {
	cl    *kgo.Client
	own   *ownership
	stop  func() // stops polling
	close func()
}

func startStaticMember(t *testing.T, b *Broker, group, topic, instance string, col *groupCollector, errs *clientErrors) *staticMember {
	t.Helper()
	own := newOwnership()
	cl, err := kgo.NewClient(append(own.opts(), kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.InstanceID(instance), kgo.ClientID(instance), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(10*time.Second), kgo.RebalanceTimeout(10*time.Second), kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	m := &staticMember{cl: cl, own: own}
	m.stop = pollGroup(t, cl, instance, col, errs)
	var once sync.Once
	m.close = func() {
		once.Do(func() {
			m.stop()
			cl.Close()
		})
	}
	t.Cleanup(m.close)
	return m
}

// Static members (KIP-345) restart within their session timeout without a
// rebalance: a follower, then the leader (KIP-814) closes without leaving
// and comes back with the same instance ID; it gets its old partitions in
// the same generation under a new member ID, the other member sees no
// rebalance callback and no new generation, the old member ID is fenced,
// and consumption goes on from the commits with nothing lost or repeated.
func TestGroupStaticMemberRestart(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	const topic, group = "static", "static-g"
	createTopic(t, b, topic, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	col := newGroupCollector(3 * 4 * 10)
	var errs clientErrors

	members := map[string]*staticMember{}
	members["s1"] = startStaticMember(t, b, group, topic, "s1", col, &errs)
	members["s1"].own.await(t, ctx, "s1 owning every partition", func(ps []int32) bool { return len(ps) == 4 })
	members["s2"] = startStaticMember(t, b, group, topic, "s2", col, &errs)
	for _, name := range []string{"s1", "s2"} {
		members[name].own.await(t, ctx, name+" owning two partitions", func(ps []int32) bool { return len(ps) == 2 })
	}
	eventually(t, ctx, "the group split between s1 and s2", func() bool {
		return evenlySplit(t, describeGroup(t, ctx, adm, group), topic, 2, 4)
	})
	leaderID, generation := members["s1"].cl.GroupMetadata()
	if _, g := members["s2"].cl.GroupMetadata(); g != generation {
		t.Fatalf("s1 in generation %d, s2 in %d", generation, g)
	}

	produced := 0
	produceAndConsume := func() {
		t.Helper()
		producePerPartition(t, b, topic, fmt.Sprint("round", produced), []int{10, 10, 10, 10})
		produced++
		end := map[int32]int64{0: int64(10 * produced), 1: int64(10 * produced), 2: int64(10 * produced), 3: int64(10 * produced)}
		eventually(t, ctx, "every record consumed and committed", func() bool {
			return col.count(0, 1, 2, 3) >= 40*produced && maps.Equal(committedOffsets(t, ctx, adm, group, topic), end)
		})
	}
	produceAndConsume()

	for _, name := range []string{"s2", "s1"} { // a follower, then the leader
		other := "s1"
		if name == "s1" {
			other = "s2"
		}
		oldID, _ := members[name].cl.GroupMetadata()
		oldParts, _ := members[name].own.snapshot()
		otherID, _ := members[other].cl.GroupMetadata()
		otherParts, otherCallbacks := members[other].own.snapshot()

		members[name].close()
		dg := describeGroup(t, ctx, adm, group)
		if dg.State != "Stable" || !slices.ContainsFunc(dg.Members, func(m kadm.DescribedGroupMember) bool { return m.MemberID == oldID }) {
			t.Fatalf("%s closed: state %s, members %v; want Stable with %s still in (a static member does not leave)", name, dg.State, dg.Members, oldID)
		}
		members[name] = startStaticMember(t, b, group, topic, name, col, &errs)
		members[name].own.await(t, ctx, name+" restarted owning its partitions", func(ps []int32) bool { return len(ps) > 0 })

		newID, g := members[name].cl.GroupMetadata()
		if newID == oldID || g != generation {
			t.Errorf("%s restarted as %s in generation %d; want a new member ID in generation %d", name, newID, g, generation)
		}
		if ps, _ := members[name].own.snapshot(); !slices.Equal(ps, oldParts) {
			t.Errorf("%s restarted with partitions %v, want its old %v", name, ps, oldParts)
		}
		fenced := newRawMember(t, b, group, "consumer", 10*time.Second)
		fenced.memberID, fenced.generation, fenced.instanceID = oldID, generation, kmsg.StringPtr(name)
		if code := fenced.heartbeat(); code != kerr.FencedInstanceID.Code {
			t.Errorf("heartbeat of %s's old member ID: %v, want FENCED_INSTANCE_ID", name, kerr.ErrorForCode(code))
		}

		produceAndConsume()
		if id, g := members[other].cl.GroupMetadata(); id != otherID || g != generation {
			t.Errorf("after %s restarted, %s is %s in generation %d; want %s in %d", name, other, id, g, otherID, generation)
		}
		if ps, callbacks := members[other].own.snapshot(); callbacks != otherCallbacks || !slices.Equal(ps, otherParts) {
			t.Errorf("after %s restarted, %s had %d more rebalance callbacks and owns %v (owned %v)", name, other, callbacks-otherCallbacks, ps, otherParts)
		}
		if _, g := members[name].cl.GroupMetadata(); g != generation {
			t.Errorf("%s moved to generation %d, want %d", name, g, generation)
		}
	}
	if id, _ := members["s1"].cl.GroupMetadata(); id == leaderID {
		t.Errorf("s1 kept member ID %s across its restart", id)
	}
	for _, m := range members {
		m.stop()
	}
	col.check(t, map[int32][2]int64{0: {0, 30}, 1: {0, 30}, 2: {0, 30}, 3: {0, 30}})
	errs.check(t)
}

// rawMember is a classic group member driven by hand on its own
// connection: it joins, syncs, heartbeats and commits only when told to.
// Its methods call t.Fatal and so belong to the test goroutine.
type rawMember struct {
	t            *testing.T
	rc           *rawConn
	corr         int32
	group        string
	instanceID   *string
	session      time.Duration
	protocolType string
	protocols    []kmsg.JoinGroupRequestProtocol

	memberID   string
	generation int32
	leader     string
	assignment []byte
}

// consumerProtocol is a consumer protocol offering for topics, with
// ConsumerMemberMetadata v3 as Kafka's Java consumer sends it.
func consumerProtocol(name string, topics ...string) kmsg.JoinGroupRequestProtocol {
	md := kmsg.NewConsumerMemberMetadata()
	md.Version = 3
	md.Topics = topics
	md.Generation = -1
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = name, md.AppendTo(nil)
	return p
}

// consumerAssignment encodes a consumer protocol assignment of partitions
// of topic.
func consumerAssignment(topic string, partitions ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	at := kmsg.NewConsumerMemberAssignmentTopic()
	at.Topic, at.Partitions = topic, partitions
	a.Topics = append(a.Topics, at)
	return a.AppendTo(nil)
}

// newRawMember connects a member of group; FindCoordinator first, as a
// client does, which creates __consumer_offsets.
func newRawMember(t *testing.T, b *Broker, group, protocolType string, session time.Duration, protocols ...kmsg.JoinGroupRequestProtocol) *rawMember {
	t.Helper()
	m := &rawMember{t: t, rc: dialRaw(t, b), group: group, session: session, protocolType: protocolType, protocols: protocols, generation: -1}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 4
	req.CoordinatorKeys = []string{group}
	resp := m.call(req).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 || resp.Coordinators[0].NodeID != 1 {
		t.Fatalf("FindCoordinator %s: %+v", group, resp.Coordinators)
	}
	return m
}

// call sends req and returns the response, allowing e2eTimeout for it.
func (m *rawMember) call(req kmsg.Request) kmsg.Response {
	m.t.Helper()
	m.corr++
	m.rc.nc.SetDeadline(time.Now().Add(e2eTimeout))
	return m.rc.roundTrip(req, m.corr)
}

func (m *rawMember) joinRequest() *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group = m.group
	req.SessionTimeoutMillis = int32(m.session.Milliseconds())
	req.RebalanceTimeoutMillis = 10000
	req.MemberID = m.memberID
	req.InstanceID = m.instanceID
	req.ProtocolType = m.protocolType
	req.Protocols = m.protocols
	return req
}

// join sends JoinGroup, again with the member ID it is given
// (MEMBER_ID_REQUIRED), and fails the test on any error.
func (m *rawMember) join() {
	m.t.Helper()
	for {
		resp := m.call(m.joinRequest()).(*kmsg.JoinGroupResponse)
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			m.memberID = resp.MemberID
			continue
		}
		if resp.ErrorCode != 0 {
			m.t.Fatalf("join %s: %v", m.group, kerr.ErrorForCode(resp.ErrorCode))
		}
		m.memberID, m.generation, m.leader = resp.MemberID, resp.Generation, resp.LeaderID
		return
	}
}

// sync sends SyncGroup with the leader's assignments (nil from a follower)
// and keeps the member's own.
func (m *rawMember) sync(assignments map[string][]byte) int16 {
	m.t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.memberID, m.instanceID
	req.ProtocolType = kmsg.StringPtr(m.protocolType)
	req.Protocol = kmsg.StringPtr(m.protocols[0].Name)
	for _, id := range slices.Sorted(maps.Keys(assignments)) {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = id, assignments[id]
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	resp := m.call(req).(*kmsg.SyncGroupResponse)
	if resp.ErrorCode == 0 {
		m.assignment = resp.MemberAssignment
	}
	return resp.ErrorCode
}

func (m *rawMember) heartbeat() int16 {
	m.t.Helper()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.memberID, m.instanceID
	return m.call(req).(*kmsg.HeartbeatResponse).ErrorCode
}

// commit commits offsets of topic as this member, in its generation, and
// returns each partition's code.
func (m *rawMember) commit(topic string, offsets map[int32]int64) map[int32]int16 {
	m.t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation, req.MemberID, req.InstanceID = m.group, m.generation, m.memberID, m.instanceID
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, offsets[p]
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := m.call(req).(*kmsg.OffsetCommitResponse)
	codes := map[int32]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes[p.Partition] = p.ErrorCode
		}
	}
	return codes
}

// assigned decodes the member's consumer assignment for topic.
func (m *rawMember) assigned(topic string) []int32 {
	m.t.Helper()
	if len(m.assignment) == 0 {
		return nil
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(m.assignment); err != nil {
		m.t.Fatalf("member %s: assignment: %v", m.memberID, err)
	}
	for _, at := range a.Topics {
		if at.Topic == topic {
			return slices.Sorted(slices.Values(at.Partitions))
		}
	}
	return nil
}

// followUntilAssigned joins as a follower and heartbeats every 100ms,
// rejoining whenever the group rebalances, until the leader assigned it
// partitions of topic.
func (m *rawMember) followUntilAssigned(ctx context.Context, topic string) []int32 {
	m.t.Helper()
	code := kerr.RebalanceInProgress.Code
	for {
		switch code {
		case 0:
			if ps := m.assigned(topic); len(ps) > 0 {
				return ps
			}
		case kerr.RebalanceInProgress.Code:
			m.join()
			if m.leader == m.memberID {
				m.t.Fatalf("member %s was made leader of %s; it follows only", m.memberID, m.group)
			}
			if code = m.sync(nil); code != 0 {
				continue
			}
			if ps := m.assigned(topic); len(ps) > 0 {
				return ps
			}
		default:
			m.t.Fatalf("member %s of %s: %v", m.memberID, m.group, kerr.ErrorForCode(code))
		}
		select {
		case <-time.After(100 * time.Millisecond): // the heartbeat interval
		case <-ctx.Done():
			m.t.Fatalf("member %s of %s never assigned partitions of %s: %v", m.memberID, m.group, topic, ctx.Err())
		}
		code = m.heartbeat()
	}
}
