package broker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Share sessions (KIP-932): a share consumer keeps one session per broker,
// keyed by its group and member ID, holding the partitions it fetches
// there. Epoch 0 opens one (replacing the member's previous one), each
// later request carries the next epoch and adds or forgets partitions, and
// -1 closes it: the member's acquired records on its partitions are
// released. As in Kafka 4.1 and later, a session belongs to the connection
// that opened it: when that connection closes, the session is closed the
// same way, so a consumer that dies gives its records back at once rather
// than when their locks expire (a consumer whose connection stays open,
// hung, keeps them until then).

type shareSessionKey struct{ group, member string }

type shareSession struct {
	conn     uint64         // the connection it lives on
	epoch    int32          // the epoch the next request must carry
	parts    []sharePartKey // in the order they were added
	lastUsed time.Time
}

type shareSessions struct {
	mu       sync.Mutex
	sessions map[shareSessionKey]*shareSession
}

func newShareSessions() *shareSessions {
	return &shareSessions{sessions: map[shareSessionKey]*shareSession{}}
}

// shareSessionUpdate is a request's effect on its session.
type shareSessionUpdate struct {
	epoch  int32
	add    []sharePartKey
	forget []sharePartKey
}

// apply checks a request's epoch against the member's session and
// applies it. It returns the session's partitions after the request (nil
// for a close), the partitions a replaced or closed session held (to
// release), and the request's error.
func (ss *shareSessions) apply(k shareSessionKey, conn uint64, u shareSessionUpdate, now time.Time) (parts, dropped []sharePartKey, code int16) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.sessions[k]
	switch {
	case u.epoch == 0:
		if ok {
			dropped = s.parts
		}
		s = &shareSession{conn: conn, epoch: 1, lastUsed: now}
		for _, p := range u.add {
			if !slices.Contains(s.parts, p) {
				s.parts = append(s.parts, p)
			}
		}
		ss.sessions[k] = s
		return slices.Clone(s.parts), dropped, 0
	case !ok:
		return nil, nil, kerr.ShareSessionNotFound.Code
	case u.epoch == -1:
		delete(ss.sessions, k)
		return nil, s.parts, 0
	case u.epoch != s.epoch:
		return nil, nil, kerr.InvalidShareSessionEpoch.Code
	}
	s.epoch = nextShareEpoch(s.epoch)
	s.lastUsed = now
	for _, p := range u.forget {
		if i := slices.Index(s.parts, p); i >= 0 {
			s.parts = slices.Delete(s.parts, i, i+1)
		}
	}
	for _, p := range u.add {
		if !slices.Contains(s.parts, p) {
			s.parts = append(s.parts, p)
		}
	}
	return slices.Clone(s.parts), nil, 0
}

// nextShareEpoch wraps past MaxInt32 to 1, as Kafka's session epochs do.
func nextShareEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// closeConn removes and returns the sessions of a connection that closed.
func (ss *shareSessions) closeConn(conn uint64) map[shareSessionKey][]sharePartKey {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := map[shareSessionKey][]sharePartKey{}
	for k, s := range ss.sessions {
		if s.conn == conn {
			out[k] = s.parts
			delete(ss.sessions, k)
		}
	}
	return out
}

// hasGroup reports whether a member of group has a session here.
func (ss *shareSessions) hasGroup(group string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k := range ss.sessions {
		if k.group == group {
			return true
		}
	}
	return false
}

// closeShareSessions closes the share sessions of a connection that
// closed, releasing their members' records.
func (b *Broker) closeShareSessions(conn uint64) {
	closed := b.shareSessions.closeConn(conn)
	if len(closed) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), 10*time.Second)
	defer cancel()
	for k, parts := range closed {
		b.releaseShareMember(ctx, k.group, k.member, parts)
	}
	for k := range closed {
		b.dropIdleShareGroup(k.group)
	}
}
