package controller

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/samsa-io/samsa/internal/model"
)

// formerLeader is the voter this node last followed as the quorum's leader
// since it last led itself. A node that wins an election knows more about
// that one voter than about any other broker: Raft heard from it until it
// stopped (Raft's LastContact), while the heartbeats of every other broker
// went to it and are lost with it.
//
// Kafka's controller gives every broker a full session on failover. When the
// active controller's node dies, its broker then stays unfenced for the
// election plus a whole session, and its partitions wait that long for a new
// leader: 4.6 s median, 5.4 s p99 in the failover soak, against 3.3 s when the
// dead leader was not the controller. Counting that one broker's session from
// the last contact instead ends it when it would have ended had it
// heartbeated to a live controller.
//
// Race: the watchLeadership goroutine forgets the former leader when this
// node loses the leadership, and this one records the next leader it follows;
// if the forgetting runs late, after the next leader was recorded, that one
// is forgotten too and a later election gives its broker a full session, as
// Kafka would. The other order, a leader from before this node's own term
// credited after it, needs a loss and a win coalesced in Raft's one-slot
// LeaderCh, and even then the credit is capped at half a session.
type formerLeader struct {
	mu    sync.Mutex
	id    model.NodeID
	known bool
}

func (f *formerLeader) set(id model.NodeID, known bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.id, f.known = id, known
}

func (f *formerLeader) get() (model.NodeID, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id, f.known
}

// watchQuorumLeader records each other voter the node follows as leader.
// Losing the leadership forgets it (watchLeadership): after leading, Raft's
// last contact is this node's own step-down, which says nothing of a voter
// that led before.
func (c *Controller) watchQuorumLeader(ctx context.Context) {
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	c.raft.RegisterObserver(obs)
	defer c.raft.DeregisterObserver(obs)
	note := func(id raft.ServerID) {
		if id == "" {
			return // an election is under way: the former leader stays
		}
		if n, ok := serverNode(id); ok && n != c.cfg.NodeID {
			c.former.set(n, true)
		}
	}
	// A leader known before the observer was registered.
	_, id := c.raft.LeaderWithID()
	note(id)
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-ch:
			note(o.Data.(raft.LeaderObservation).LeaderID)
		}
	}
}

// sessionsOnElection starts every broker's session now, on becoming the
// active controller, but the former leader's broker's at Raft's last contact
// with it: its heartbeats and Raft's went to the same node, so it was alive
// then and is not known alive since. The credit is at most half a session,
// so that a live broker on a voter that merely lost the leadership (a pause,
// a lost packet) still has half a session to find this controller and
// heartbeat.
func (c *Controller) sessionsOnElection(ids []model.NodeID) {
	now := c.clock.Now()
	c.live.reset(ids, now)
	id, ok := c.former.get()
	if !ok {
		return
	}
	contact := c.raft.LastContact()
	if contact.IsZero() {
		return
	}
	// Raft's clock is the wall clock; the sessions' may be a test's.
	credit := min(time.Since(contact), c.cfg.SessionTimeout/2)
	if credit > 0 && slices.Contains(ids, id) {
		c.live.heard(id, now.Add(-credit))
		c.log.Info("the former controller's broker keeps the session it had at the last contact",
			"broker", id, "since_contact", credit)
	}
}
