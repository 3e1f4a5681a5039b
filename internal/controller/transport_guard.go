package controller

import (
	"sync"

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
}

func guardHeartbeats(t *raft.NetworkTransport) *heartbeatGuard {
	return &heartbeatGuard{NetworkTransport: t}
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
