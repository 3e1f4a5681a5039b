package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/model"
)

// Growing and shrinking the quorum (KIP-853's AddRaftVoter and
// RemoveRaftVoter) maps onto hashicorp/raft's configuration changes:
//
//   - AddVoter adds the new controller as a non-voter at its controller
//     listener (AddNonvoter), so the leader replicates the log to it
//     without counting it, waits until it has caught up, and only then
//     promotes it (AddVoter on a non-voter). Kafka's new controller is an
//     observer that fetches by itself; ours cannot, Raft's leader pushes,
//     so the first step is the leader's.
//   - RemoveVoter is RemoveServer, or DemoteVoter for a node that is a
//     registered broker too (a combined node), whose broker still needs
//     the log. A removed leader steps down (Config.ShutdownOnRemove is
//     off) and the remaining voters elect one.
//
// Only a quorum found through controller.quorum.bootstrap.servers changes
// (Kafka's kraft.version 1): a static controller.quorum.voters quorum is
// what every node's configuration file says, as Kafka's kraft.version 0,
// and is refused with UNSUPPORTED_VERSION. One change runs at a time;
// another meanwhile is refused with REQUEST_TIMED_OUT, as Kafka's leader
// refuses it.

// caughtUpPoll is how often AddVoter looks at the new voter's progress;
// Raft's heartbeats report it a few times per heartbeat timeout.
const caughtUpPoll = 20 * time.Millisecond

// AddVoter adds node id, whose controller listener is addr, to the voters:
// first as a non-voter, promoted once its log has reached the leader's
// commit index as it was when the call began. It returns when the new
// configuration is committed, or a Kafka error and message: NOT_CONTROLLER
// (the caller's NOT_LEADER_OR_FOLLOWER) on a node that is not active,
// UNSUPPORTED_VERSION for a static quorum, DUPLICATE_VOTER for a voter,
// INVALID_REQUEST for an address another node holds or a broker-only node,
// REQUEST_TIMED_OUT while another change runs or when ctx ends before the
// node caught up (it stays a non-voter, as Kafka's observer stays one).
func (c *Controller) AddVoter(ctx context.Context, id model.NodeID, addr string) (*kerr.Error, string) {
	f := c.addVoter(ctx, id, addr)
	if f != nil {
		return f.err, f.msg
	}
	return nil, ""
}

func (c *Controller) addVoter(ctx context.Context, id model.NodeID, addr string) *failure {
	guard, f := c.beginVoterChange()
	if f != nil {
		return f
	}
	defer c.voterChange.Store(false)
	servers := c.configuration()
	sid := raft.ServerID(nodeResource(id))
	member := false
	for _, s := range servers {
		if s.ID == sid && s.Suffrage == raft.Voter {
			return fail(kerr.DuplicateVoter, "The voter id for %s is already part of the set of voters %s.", voterKey(id), voterKeys(servers))
		}
		if s.ID == sid && s.Address != raft.ServerAddress(addr) {
			if _, broker := c.Image().Broker(id); broker {
				// A broker-only node follows the log at its inter-broker
				// listener: moving it to an address where no controller
				// listens would cut its broker off the log.
				return fail(kerr.InvalidRequest, "node %d follows the metadata log as a broker at %s, not as a controller at %s", id, s.Address, addr)
			}
		}
		if s.ID != sid && s.Address == raft.ServerAddress(addr) {
			// Raft refuses a configuration with one address twice.
			other, _ := serverNode(s.ID)
			return fail(kerr.InvalidRequest, "node %d is already in the quorum at %s", other, addr)
		}
		member = member || s.ID == sid
	}
	if !member {
		// What this node heard of it while leading before, if it was
		// removed under another leader since, says nothing of it now.
		guard.forget(sid)
	}
	target := c.raft.CommitIndex()
	timeout := c.applyTimeout(ctx)
	if err := c.raft.AddNonvoter(sid, raft.ServerAddress(addr), 0, timeout).Error(); err != nil {
		return voterChangeFailure(err)
	}
	c.log.Info("a new controller follows the metadata log as a non-voter until it catches up", "node_id", id, "addr", addr, "target_index", target)
	if f := c.awaitCaughtUp(ctx, guard, id, target); f != nil {
		return f
	}
	if err := c.raft.AddVoter(sid, raft.ServerAddress(addr), 0, c.applyTimeout(ctx)).Error(); err != nil {
		return voterChangeFailure(err)
	}
	c.log.Info("a controller joined the voters", "node_id", id, "addr", addr)
	return nil
}

// RemoveVoter takes node id out of the voters, returning when the new
// configuration is committed: NOT_CONTROLLER, UNSUPPORTED_VERSION and
// REQUEST_TIMED_OUT as AddVoter, VOTER_NOT_FOUND for a node that is not a
// voter, or the last one.
func (c *Controller) RemoveVoter(ctx context.Context, id model.NodeID) (*kerr.Error, string) {
	f := c.removeVoter(ctx, id)
	if f != nil {
		return f.err, f.msg
	}
	return nil, ""
}

func (c *Controller) removeVoter(ctx context.Context, id model.NodeID) *failure {
	guard, f := c.beginVoterChange()
	if f != nil {
		return f
	}
	defer c.voterChange.Store(false)
	servers := c.configuration()
	sid := raft.ServerID(nodeResource(id))
	voters, found := 0, false
	for _, s := range servers {
		if s.Suffrage == raft.Voter {
			voters++
			found = found || s.ID == sid
		}
	}
	if !found || voters == 1 {
		return fail(kerr.VoterNotFound, "Cannot remove voter %s from the set of voters %s", voterKey(id), voterKeys(servers))
	}
	if _, broker := c.Image().Broker(id); broker {
		// A combined node's broker still needs the log: it stays in the
		// configuration without a vote, as Kafka's removed voter that
		// runs on fetches as an observer.
		if err := c.raft.DemoteVoter(sid, 0, c.applyTimeout(ctx)).Error(); err != nil {
			return voterChangeFailure(err)
		}
		c.log.Info("a controller left the voters; its broker follows the log as a non-voter", "node_id", id)
		return nil
	}
	if err := c.raft.RemoveServer(sid, 0, c.applyTimeout(ctx)).Error(); err != nil {
		return voterChangeFailure(err)
	}
	guard.forget(sid)
	c.log.Info("a controller left the voters", "node_id", id)
	return nil
}

// beginVoterChange checks that this node may change the voters now and
// marks a change running; the caller clears voterChange when done.
func (c *Controller) beginVoterChange() (*heartbeatGuard, *failure) {
	if !c.Active() {
		return nil, fail(kerr.NotController, "this node is not the leader of the metadata quorum")
	}
	guard, ok := c.transport.(*heartbeatGuard)
	if !ok || len(c.cfg.Voters) > 0 {
		return nil, fail(kerr.UnsupportedVersion, "Cluster doesn't support changing the voters: the quorum is static (controller.quorum.voters, kraft.version 0); "+
			"a quorum found through controller.quorum.bootstrap.servers can change")
	}
	if !c.voterChange.CompareAndSwap(false, true) {
		return nil, fail(kerr.RequestTimedOut, "Request timed out waiting for leader to handle previous voter change request")
	}
	return guard, nil
}

// awaitCaughtUp waits until the non-voter's last log index, as its
// AppendEntries answers report it, reaches target.
func (c *Controller) awaitCaughtUp(ctx context.Context, guard *heartbeatGuard, id model.NodeID, target uint64) *failure {
	sid := raft.ServerID(nodeResource(id))
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultApplyTimeout)
		defer cancel()
	}
	tick := time.NewTicker(caughtUpPoll) // Raft runs on the wall clock too
	defer tick.Stop()
	for {
		last, heard := guard.followerLastLog(sid)
		if heard && last >= target {
			return nil
		}
		if !c.Active() {
			return fail(kerr.NotController, "this node lost the leadership of the metadata quorum")
		}
		select {
		case <-ctx.Done():
			if !heard {
				return fail(kerr.RequestTimedOut, "New voter %s is not ready to receive requests", voterKey(id))
			}
			return fail(kerr.RequestTimedOut, "New voter %s has not caught up: its log ends at %d, the leader's commit index was %d", voterKey(id), last, target)
		case <-tick.C:
		}
	}
}

// voterChangeFailure maps a configuration change's error to Kafka's code.
func voterChangeFailure(err error) *failure {
	f := proposeFailure(err)
	if f.err == kerr.RequestTimedOut {
		f.msg = fmt.Sprintf("timed out committing the new voter set: %v", err)
	}
	return f
}

// voterKey is a voter as Kafka prints a ReplicaKey; Samsa keeps no
// directory IDs.
func voterKey(id model.NodeID) string {
	return fmt.Sprintf("ReplicaKey(id=%d, directoryId=<undefined>)", id)
}

func voterKeys(servers []raft.Server) string {
	out := "["
	for _, s := range servers {
		if id, ok := serverNode(s.ID); ok && s.Suffrage == raft.Voter {
			if out != "[" {
				out += ", "
			}
			out += voterKey(id)
		}
	}
	return out + "]"
}
