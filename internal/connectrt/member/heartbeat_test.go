package member

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestLog records what the member sent, as the broker saw it.
type requestLog struct {
	mu   sync.Mutex
	seen []kmsg.Request
}

func (l *requestLog) record(req kmsg.Request) (kmsg.Response, error, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, req)
	return nil, nil, false
}

// since answers the requests recorded after the first n.
func (l *requestLog) since(n int) []kmsg.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen[n:])
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// TestHeartbeatErrors injects each heartbeat error Kafka's coordinator
// answers (in franz-go's kfake broker, whose requests can be intercepted)
// and checks what the member does next: rejoin with its member ID
// (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION), rejoin as a new member
// (UNKNOWN_MEMBER_ID), or find the coordinator again and go on
// heartbeating without a rebalance (NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE).
func TestHeartbeatErrors(t *testing.T) {
	for _, tt := range []struct {
		err            *kerr.Error
		rejoin         bool
		keepsMemberID  bool
		findsCoordAnew bool
	}{
		{kerr.RebalanceInProgress, true, true, false},
		{kerr.IllegalGeneration, true, true, false},
		{kerr.UnknownMemberID, true, false, false},
		{kerr.NotCoordinator, false, true, true},
		{kerr.CoordinatorNotAvailable, false, true, true},
	} {
		t.Run(tt.err.Message, func(t *testing.T) {
			kc, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer kc.Close()
			var log requestLog
			kc.ControlKey(int16(kmsg.JoinGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
				kc.KeepControl()
				return log.record(req)
			})
			kc.ControlKey(int16(kmsg.FindCoordinator), func(req kmsg.Request) (kmsg.Response, error, bool) {
				kc.KeepControl()
				return log.record(req)
			})
			kc.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
				kc.KeepControl()
				return log.record(req)
			})
			cfg := fastGroup
			cfg.SessionTimeout = 6 * time.Second // kfake's group.min.session.timeout.ms
			c := newClusterAt(t, kc.ListenAddrs()[0], "connect-heartbeat", cfg, testConfig(1, 2))
			w := c.start("w1", 10)
			c.waitStable(10*time.Second, "w1")
			before := c.latest["w1"]
			waitFor(t, func() bool { return len(heartbeats(log.since(0))) > 0 }, "a heartbeat")

			// The next heartbeat answers the error.
			kc.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
				resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
				resp.Version = req.GetVersion()
				resp.ErrorCode = tt.err.Code
				return resp, nil, true
			})
			mark := log.len()
			if tt.rejoin {
				waitFor(t, func() bool {
					c.mu.Lock()
					defer c.mu.Unlock()
					return c.latest["w1"].Generation > before.Generation
				}, "a new generation")
				var join *kmsg.JoinGroupRequest
				for _, r := range log.since(mark) {
					if j, ok := r.(*kmsg.JoinGroupRequest); ok {
						join = j
						break
					}
				}
				if join == nil {
					t.Fatal("no JoinGroup after the error")
				}
				if got := join.MemberID == before.MemberID; got != tt.keepsMemberID {
					t.Errorf("rejoined with member ID %q (had %q); keep it: %v", join.MemberID, before.MemberID, tt.keepsMemberID)
				}
				return
			}
			// Heartbeats go on after the coordinator is found again, at
			// the same generation and with no JoinGroup.
			waitFor(t, func() bool {
				rs := log.since(mark)
				find := slices.IndexFunc(rs, func(r kmsg.Request) bool { _, ok := r.(*kmsg.FindCoordinatorRequest); return ok })
				return find >= 0 && len(heartbeats(rs[find:])) > 0
			}, "FindCoordinator, then a heartbeat")
			for _, r := range log.since(mark) {
				if _, ok := r.(*kmsg.JoinGroupRequest); ok {
					t.Error("rejoined after a coordinator error")
				}
			}
			if _, _, leader := w.m.Leader(); !leader {
				t.Error("lost its leadership")
			}
		})
	}
}

func heartbeats(rs []kmsg.Request) []*kmsg.HeartbeatRequest {
	var out []*kmsg.HeartbeatRequest
	for _, r := range rs {
		if h, ok := r.(*kmsg.HeartbeatRequest); ok {
			out = append(out, h)
		}
	}
	return out
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
