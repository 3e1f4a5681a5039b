package broker

import (
	"container/list"
	"math/rand/v2"
	"sync"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch sessions (KIP-227) let a consumer send only the partitions whose
// fetch position changed, and get back only the partitions with something
// new. The broker remembers each session's partitions and what it last
// told the client about them.
//
// Request forms:
//
//	id 0,  epoch -1  sessionless full fetch
//	id 0,  epoch 0   full fetch that opens a session (its ID is returned)
//	id X,  epoch -1  close X, then a sessionless full fetch
//	id X,  epoch E>0 incremental fetch on X; E must be X's next epoch
//
// The cache holds at most max.incremental.fetch.session.cache.slots
// sessions; a new session evicts the least recently used one, whose client
// then gets FETCH_SESSION_ID_NOT_FOUND and starts over with a full fetch.
// With no slots no session is created: every fetch is a full one (session
// ID 0 in the response), as in Kafka.

type sessionKey struct {
	topic     string
	id        model.TopicID
	partition int32
}

// sessionPart is a partition of a session: the position the client asked
// for and what the last response reported.
type sessionPart struct {
	key         sessionKey
	fetchOffset int64
	maxBytes    int32
	leaderEpoch int32
	logStart    int64 // the follower's, unused for consumers

	sent                          bool
	lastHW, lastLSO, lastLogStart int64
}

// Locking: fetchSessions.mu guards the cache (byID, lru) and every
// session's epoch; fetchSession.mu guards that session's parts and order.
// Lock order is fetchSessions.mu, then fetchSession.mu. Neither is held
// while a fetch reads or long-polls: resolve copies the request's view of
// the session out under the locks, and the response writes back what it
// reported under fetchSession.mu alone. So two connections that use one
// session at once (a client bug: the protocol allows one fetch in flight
// per session) each see a consistent session and never race, and a
// long-polling fetch never blocks other sessions.
type fetchSession struct {
	id    int32
	epoch int32 // the epoch the next request must carry; guarded by fetchSessions.mu
	elem  *list.Element
	mu    struct {
		sync.Mutex
		parts map[sessionKey]*sessionPart
		order []sessionKey // insertion order, so responses list partitions stably
	}
}

type fetchSessions struct {
	slots int // max.incremental.fetch.session.cache.slots
	mu    sync.Mutex
	byID  map[int32]*fetchSession
	lru   *list.List // front: most recently used
}

func newFetchSessions(slots int) *fetchSessions {
	return &fetchSessions{slots: slots, byID: map[int32]*fetchSession{}, lru: list.New()}
}

// resolve applies a request to the session cache. It returns the session
// (nil for sessionless), copies of the partitions to fetch in response
// order, whether the response is incremental, and a top-level error code.
func (s *fetchSessions) resolve(req *kmsg.FetchRequest, keyOf func(t *kmsg.FetchRequestTopic) sessionKey) (*fetchSession, []sessionPart, bool, int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Version < 7 || req.SessionEpoch == -1 {
		if req.Version >= 7 && req.SessionID != 0 {
			s.removeLocked(req.SessionID)
		}
		return nil, partsFromRequest(nil, req, keyOf), false, 0
	}
	if req.SessionEpoch == 0 {
		if req.SessionID != 0 {
			s.removeLocked(req.SessionID)
		}
		fs := s.newLocked()
		if fs == nil { // no slots: a full fetch without a session
			return nil, partsFromRequest(nil, req, keyOf), false, 0
		}
		fs.mu.Lock()
		defer fs.mu.Unlock()
		return fs, partsFromRequest(fs, req, keyOf), false, 0
	}
	fs, ok := s.byID[req.SessionID]
	if !ok {
		return nil, nil, false, kerr.FetchSessionIDNotFound.Code
	}
	if req.SessionEpoch != fs.epoch {
		return nil, nil, false, kerr.InvalidFetchSessionEpoch.Code
	}
	fs.epoch = nextEpoch(fs.epoch)
	s.lru.MoveToFront(fs.elem)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	partsFromRequest(fs, req, keyOf)
	forget(fs, req, keyOf)
	out := make([]sessionPart, 0, len(fs.mu.order))
	for _, k := range fs.mu.order {
		out = append(out, *fs.mu.parts[k])
	}
	return fs, out, true, 0
}

// reported records what a response told the client about a partition, the
// base of the next incremental response's "changed" test. A partition
// forgotten meanwhile (by a concurrent request) is skipped.
func (fs *fetchSession) reported(k sessionKey, hw, lso, logStart int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if sp, ok := fs.mu.parts[k]; ok {
		sp.sent, sp.lastHW, sp.lastLSO, sp.lastLogStart = true, hw, lso, logStart
	}
}

func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// newLocked opens a session, evicting the least recently used one when the
// cache is full; nil when the cache has no slots.
func (s *fetchSessions) newLocked() *fetchSession {
	if s.slots <= 0 {
		return nil
	}
	for len(s.byID) >= s.slots {
		old := s.lru.Back().Value.(*fetchSession)
		s.removeLocked(old.id)
	}
	id := rand.Int32N(1<<31-1) + 1
	for s.byID[id] != nil {
		id = rand.Int32N(1<<31-1) + 1
	}
	fs := &fetchSession{id: id, epoch: 1}
	fs.mu.parts = map[sessionKey]*sessionPart{}
	fs.elem = s.lru.PushFront(fs)
	s.byID[id] = fs
	return fs
}

func (s *fetchSessions) removeLocked(id int32) {
	if fs, ok := s.byID[id]; ok {
		s.lru.Remove(fs.elem)
		delete(s.byID, id)
	}
}

// partsFromRequest adds or updates the request's partitions in the session
// (if any; its mu held) and returns copies of them in request order.
func partsFromRequest(fs *fetchSession, req *kmsg.FetchRequest, keyOf func(t *kmsg.FetchRequestTopic) sessionKey) []sessionPart {
	var out []sessionPart
	for i := range req.Topics {
		t := &req.Topics[i]
		tk := keyOf(t)
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			k := tk
			k.partition = rp.Partition
			sp := &sessionPart{key: k}
			if fs != nil {
				if known, ok := fs.mu.parts[k]; ok {
					sp = known
				} else {
					fs.mu.parts[k] = sp
					fs.mu.order = append(fs.mu.order, k)
				}
			}
			sp.fetchOffset, sp.maxBytes, sp.leaderEpoch, sp.logStart = rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset
			out = append(out, *sp)
		}
	}
	return out
}

// forget drops the request's forgotten topics from the session (its mu
// held).
func forget(fs *fetchSession, req *kmsg.FetchRequest, keyOf func(t *kmsg.FetchRequestTopic) sessionKey) {
	if len(req.ForgottenTopics) == 0 {
		return
	}
	for _, ft := range req.ForgottenTopics {
		tk := keyOf(&kmsg.FetchRequestTopic{Topic: ft.Topic, TopicID: ft.TopicID})
		for _, p := range ft.Partitions {
			k := tk
			k.partition = p
			delete(fs.mu.parts, k)
		}
	}
	kept := fs.mu.order[:0]
	for _, k := range fs.mu.order {
		if _, ok := fs.mu.parts[k]; ok {
			kept = append(kept, k)
		}
	}
	fs.mu.order = kept
}
