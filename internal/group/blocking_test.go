package group

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// blockingSetup is a coordinator for the tests of the blocking API: a
// manual clock, one partition, and a hook that reports each request that
// starts waiting, so the test knows a call is parked without sleeping.
type blockingSetup struct {
	clock   *clock.Manual
	c       *Coordinator
	waiting chan struct{}
	tasks   *task.Group
}

func newBlockingSetup(t *testing.T, cfg Config, log Log) *blockingSetup {
	t.Helper()
	cfg.OffsetsTopicNumPartitions = 1
	b := &blockingSetup{clock: clock.NewManual(epoch), waiting: make(chan struct{}, 16)}
	b.c = New(cfg, Deps{Log: log, Clock: b.clock, Logger: slog.New(slog.DiscardHandler)})
	b.c.waitHook = func() { b.waiting <- struct{}{} }
	b.tasks = task.NewGroup(t.Context())
	t.Cleanup(func() {
		b.c.Stop()
		b.tasks.Stop()
	})
	return b
}

// parked waits until n more requests are waiting in the coordinator.
func (b *blockingSetup) parked(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-b.waiting:
		case <-t.Context().Done():
			t.Fatal("test ended before the request parked")
		}
	}
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second): // a failure timeout, not a wait
		t.Fatal("no answer")
		panic("unreachable")
	}
}

func newJoinGroupRequest(member string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	req.Group = "g"
	req.MemberID = member
	req.SessionTimeoutMillis = 10000
	req.RebalanceTimeoutMillis = 30000
	req.ProtocolType = "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("m")}}
	return req
}

// joinWithID does the MEMBER_ID_REQUIRED round trip's first half.
func joinWithID(t *testing.T, c *Coordinator, client string) string {
	t.Helper()
	resp := c.JoinGroup(t.Context(), newJoinGroupRequest(""), client, "/127.0.0.1")
	if resp.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("first join: %s", errName(resp.ErrorCode))
	}
	return resp.MemberID
}

// Three members join through the blocking API: their JoinGroups wait in
// goroutines until the initial delay ends, the followers' SyncGroups wait
// until the leader's arrives.
func TestBlockingJoinAndSync(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InitialRebalanceDelay = 3 * time.Second
	b := newBlockingSetup(t, cfg, NewMemLog())
	if err := b.c.Load(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	joins := make(chan *kmsg.JoinGroupResponse, 3)
	for _, client := range []string{"c1", "c2", "c3"} {
		id := joinWithID(t, b.c, client)
		b.tasks.Go(func(ctx context.Context) {
			joins <- b.c.JoinGroup(ctx, newJoinGroupRequest(id), client, "/127.0.0.1")
		})
		b.parked(t, 1)
	}
	for range 2 { // the first delay is extended once: members kept arriving
		b.clock.Advance(3 * time.Second)
		b.c.tick()
	}
	var leader string
	var members []string
	for range 3 {
		resp := receive(t, joins)
		if resp.ErrorCode != 0 || resp.Generation != 1 || *resp.Protocol != "range" {
			t.Fatalf("join: %+v", resp)
		}
		if resp.LeaderID == resp.MemberID {
			leader = resp.MemberID
			if len(resp.Members) != 3 {
				t.Fatalf("leader got %d members", len(resp.Members))
			}
		}
		members = append(members, resp.MemberID)
	}
	if leader == "" {
		t.Fatal("no leader")
	}

	syncs := make(chan *kmsg.SyncGroupResponse, 2)
	sync := func(member string, assign []kmsg.SyncGroupRequestGroupAssignment) *kmsg.SyncGroupRequest {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version, req.Group, req.Generation, req.MemberID, req.GroupAssignment = 5, "g", 1, member, assign
		return req
	}
	var assign []kmsg.SyncGroupRequestGroupAssignment
	for _, m := range members {
		assign = append(assign, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte("for " + m)})
		if m == leader {
			continue
		}
		b.tasks.Go(func(ctx context.Context) { syncs <- b.c.SyncGroup(ctx, sync(m, nil)) })
		b.parked(t, 1)
	}
	if resp := b.c.SyncGroup(t.Context(), sync(leader, assign)); resp.ErrorCode != 0 || string(resp.MemberAssignment) != "for "+leader {
		t.Fatalf("leader sync: %+v", resp)
	}
	for range 2 {
		resp := receive(t, syncs)
		if resp.ErrorCode != 0 || len(resp.MemberAssignment) == 0 || *resp.Protocol != "range" {
			t.Fatalf("follower sync: %+v", resp)
		}
	}
}

// A JoinGroup whose context ends stops waiting; the member stays in the
// join phase, as in Kafka, where a closed connection does not withdraw a
// join.
func TestBlockingJoinContextEnds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InitialRebalanceDelay = time.Second
	b := newBlockingSetup(t, cfg, NewMemLog())
	if err := b.c.Load(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	id := joinWithID(t, b.c, "c1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan *kmsg.JoinGroupResponse, 1)
	b.tasks.Go(func(context.Context) { done <- b.c.JoinGroup(ctx, newJoinGroupRequest(id), "c1", "/127.0.0.1") })
	b.parked(t, 1)
	cancel()
	if resp := receive(t, done); resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join after cancel: %s", errName(resp.ErrorCode))
	}
}

// A partition marked loading, as the broker marks one it has just become
// the leader of, answers COORDINATOR_LOAD_IN_PROGRESS until its load ends.
// Stop answers waiting requests NOT_COORDINATOR, which sends clients
// looking for the new coordinator.
func TestStartLoadStop(t *testing.T) {
	log := &gatedLog{MemLog: NewMemLog(), gate: make(chan struct{})}
	b := newBlockingSetup(t, DefaultConfig(), log)
	b.c.Start()
	b.c.MarkLoading(0)
	loaded := make(chan error, 1)
	b.tasks.Go(func(ctx context.Context) { loaded <- b.c.Load(ctx, 0) })
	if resp := b.c.JoinGroup(t.Context(), newJoinGroupRequest(""), "c1", "h"); resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("join while loading: %s", errName(resp.ErrorCode))
	}
	list := b.c.ListGroups(t.Context(), kmsg.NewPtrListGroupsRequest())
	if list.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("list while loading: %s", errName(list.ErrorCode))
	}
	close(log.gate)
	if err := receive(t, loaded); err != nil {
		t.Fatal(err)
	}

	id := joinWithID(t, b.c, "c1")
	done := make(chan *kmsg.JoinGroupResponse, 1)
	// With the default 3s initial delay and a manual clock that does not
	// move, this join waits until Stop.
	b.tasks.Go(func(ctx context.Context) { done <- b.c.JoinGroup(ctx, newJoinGroupRequest(id), "c1", "h") })
	b.parked(t, 1)
	b.c.Stop()
	if resp := receive(t, done); resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("waiting join at stop: %s", errName(resp.ErrorCode))
	}
	if resp := b.c.JoinGroup(t.Context(), newJoinGroupRequest(""), "c1", "h"); resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join after stop: %s", errName(resp.ErrorCode))
	}
}

// gatedLog holds ReadAll until gate is closed.
type gatedLog struct {
	*MemLog
	gate chan struct{}
}

func (l *gatedLog) ReadAll(ctx context.Context, partition int32, fn func([]byte) error) error {
	select {
	case <-l.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return l.MemLog.ReadAll(ctx, partition, fn)
}
