package controller

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// heartbeatGuard is the TCP transport with one change: the heartbeats it
// hands to Raft on its own connection goroutines stop before the store
// closes.
//
// hashicorp/raft answers heartbeats on the transport's goroutine, outside
// its main loop, and Shutdown does not wait for them. A heartbeat that
// passed Raft's shutdown check just before Shutdown could write the new
// term after the store was closed, and Raft panics when that write fails
// ("failed to save current term: database not open"): a voter stopping
// while another took over could crash instead of exiting. stop waits for
// the heartbeats in flight and drops later ones; the transport's Close then
// ends their connections.
type heartbeatGuard struct {
	*raft.NetworkTransport

	mu      sync.RWMutex
	stopped bool

	// lastLog is each follower's last log index as its latest successful
	// AppendEntries answer gave it (heartbeats included, which the leader
	// sends every tenth of the heartbeat timeout): hashicorp/raft keeps
	// its followers' match indexes to itself, and AddVoter needs to know
	// when a new voter has caught up.
	progressMu sync.Mutex
	lastLog    map[raft.ServerID]uint64    // guarded by progressMu
	heardAt    map[raft.ServerID]time.Time // guarded by progressMu: when lastLog was last heard
	// now is the controller's clock.
	now func() time.Time
}

// AppendEntries sends as the transport does and records the follower's
// last log index from a successful answer.
func (g *heartbeatGuard) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := g.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil && resp.Success {
		g.progressMu.Lock()
		if g.lastLog == nil {
			g.lastLog, g.heardAt = map[raft.ServerID]uint64{}, map[raft.ServerID]time.Time{}
		}
		g.lastLog[id] = max(g.lastLog[id], resp.LastLog)
		g.heardAt[id] = g.now()
		g.progressMu.Unlock()
	}
	return err
}

// followerLastLog is the follower's last log index as last heard; false
// before a successful answer from it.
func (g *heartbeatGuard) followerLastLog(id raft.ServerID) (uint64, bool) {
	n, _, ok := g.followerProgress(id)
	return n, ok
}

// followerProgress is the follower's last log index and when it was last
// heard; false before a successful answer from it.
func (g *heartbeatGuard) followerProgress(id raft.ServerID) (uint64, time.Time, bool) {
	g.progressMu.Lock()
	defer g.progressMu.Unlock()
	n, ok := g.lastLog[id]
	return n, g.heardAt[id], ok
}

// forget drops a follower's progress, once it leaves the configuration:
// a node added again starts from nothing known.
func (g *heartbeatGuard) forget(id raft.ServerID) {
	g.progressMu.Lock()
	defer g.progressMu.Unlock()
	delete(g.lastLog, id)
	delete(g.heardAt, id)
}

func guardHeartbeats(t *raft.NetworkTransport, now func() time.Time) *heartbeatGuard {
	return &heartbeatGuard{NetworkTransport: t, now: now}
}

// SetHeartbeatHandler hands Raft's handler to the transport behind the
// guard.
func (g *heartbeatGuard) SetHeartbeatHandler(fn func(raft.RPC)) {
	if fn == nil {
		g.NetworkTransport.SetHeartbeatHandler(nil)
		return
	}
	g.NetworkTransport.SetHeartbeatHandler(func(rpc raft.RPC) {
		g.mu.RLock()
		defer g.mu.RUnlock()
		if g.stopped {
			// Unanswered: the transport gives up on it when it closes.
			return
		}
		fn(rpc)
	})
}

// stop returns once no heartbeat is being handled; none is handled after.
func (g *heartbeatGuard) stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}
