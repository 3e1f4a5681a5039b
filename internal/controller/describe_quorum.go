package controller

import (
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/samsa-io/samsa/internal/model"
)

// QuorumState is the metadata quorum as the active controller sees it, what
// DescribeQuorum reports. Every offset is a metadata offset: the Raft index
// of the last metadata batch applied (metadata.Image.Offset), the space
// BrokerHeartbeat's CurrentMetadataOffset is in, so a node that has applied
// everything the leader has shows the leader's high watermark.
type QuorumState struct {
	LeaderID model.NodeID
	// LeaderEpoch is the Raft term the leader was elected in.
	LeaderEpoch int64
	// HighWatermark is the offset of the last committed batch the leader
	// has applied.
	HighWatermark int64
	Voters        []ReplicaState
	// Observers are registered brokers outside the voter set (Raft
	// non-voters too); none while every node is a combined voter.
	Observers []ReplicaState
}

// ReplicaState is one node's progress through the metadata log, as far as
// the active controller knows it: the leader's own is exact, a broker's is
// what its last BrokerHeartbeat said, and a node that sends none (a
// controller-only node) is what the leader's replication to it last heard
// (raftProgress: hashicorp/raft does not expose its followers' match
// indexes).
type ReplicaState struct {
	NodeID model.NodeID
	// LogEndOffset is the metadata offset the node last reported applied;
	// -1 before this controller has heard from it.
	LogEndOffset int64
	// LastFetch is when this controller last heard from the node; zero
	// when it has not since it became active.
	LastFetch time.Time
	// LastCaughtUp is the last time the node was known to have applied
	// everything the leader had: the time of a report at the leader's high
	// watermark, or the time of the report before one that reached the high
	// watermark of that earlier report (Kafka's rule for LastCaughtUpTimestamp).
	// Zero when unknown.
	LastCaughtUp time.Time
}

// DescribeQuorum reports the quorum, on the active controller only (others
// answer ErrNotActive: the followers' progress is the leader's memory).
func (c *Controller) DescribeQuorum() (QuorumState, error) {
	if !c.Active() {
		return QuorumState{}, ErrNotActive
	}
	now := c.clock.Now()
	img := c.Image()
	st := QuorumState{LeaderID: c.cfg.NodeID, LeaderEpoch: int64(c.raft.CurrentTerm()), HighWatermark: img.Offset()}
	f := c.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return QuorumState{}, err
	}
	known := map[model.NodeID]bool{}
	progress := c.live.progressSnapshot()
	replica := func(id model.NodeID) ReplicaState {
		if id == c.cfg.NodeID {
			return ReplicaState{NodeID: id, LogEndOffset: st.HighWatermark, LastFetch: now, LastCaughtUp: now}
		}
		p, ok := progress[id]
		if !ok {
			return c.raftProgress(id, st.HighWatermark)
		}
		return ReplicaState{NodeID: id, LogEndOffset: p.applied, LastFetch: p.heard, LastCaughtUp: p.caughtUp}
	}
	for _, s := range f.Configuration().Servers {
		id, ok := serverNode(s.ID)
		if !ok {
			continue
		}
		known[id] = true
		if s.Suffrage == raft.Voter {
			st.Voters = append(st.Voters, replica(id))
		} else {
			st.Observers = append(st.Observers, replica(id))
		}
	}
	for _, b := range img.Brokers() {
		if !known[b.NodeID] {
			st.Observers = append(st.Observers, replica(b.NodeID))
		}
	}
	byID := func(a, b ReplicaState) int { return int(a.NodeID) - int(b.NodeID) }
	slices.SortFunc(st.Voters, byID)
	slices.SortFunc(st.Observers, byID)
	return st, nil
}

// raftProgress is a node's progress as Raft's replication to it reports
// it, for a node that sends no BrokerHeartbeat (a controller-only node):
// its last log index, capped at the high watermark (a Raft index may be a
// configuration entry past the last metadata batch), heard when the
// leader's last AppendEntries to it succeeded; caught up then if that
// index has reached the high watermark of now. LogEndOffset -1 when Raft
// has not reached it.
func (c *Controller) raftProgress(id model.NodeID, hw int64) ReplicaState {
	g, ok := c.transport.(*heartbeatGuard)
	if !ok {
		return ReplicaState{NodeID: id, LogEndOffset: -1}
	}
	last, at, ok := g.followerProgress(raft.ServerID(nodeResource(id)))
	if !ok {
		return ReplicaState{NodeID: id, LogEndOffset: -1}
	}
	r := ReplicaState{NodeID: id, LogEndOffset: min(int64(last), hw), LastFetch: at}
	if int64(last) >= hw {
		r.LastCaughtUp = at
	}
	return r
}

// progress is what the active controller last heard of one broker's
// metadata log: its applied offset, when, and when it was last caught up.
type progress struct {
	applied  int64
	heard    time.Time
	caughtUp time.Time
	// hwAtHeard is the leader's high watermark when the report came.
	hwAtHeard int64
}

// nextProgress folds one report (applied offset at time now, the leader's
// high watermark hw then) into what was known. A node is caught up now
// when it has everything the leader has; one that has reached what the
// leader had at its previous report was caught up at that report, as
// Kafka's leader judges a follower's fetches.
func nextProgress(prev progress, known bool, applied, hw int64, now time.Time) progress {
	next := progress{applied: applied, heard: now, hwAtHeard: hw}
	if known {
		next.caughtUp = prev.caughtUp
	}
	switch {
	case applied >= hw:
		next.caughtUp = now
	case known && applied >= prev.hwAtHeard && prev.heard.After(next.caughtUp):
		next.caughtUp = prev.heard
	}
	return next
}

// reported records a broker's BrokerHeartbeat report of its applied
// metadata offset, with the leader's high watermark at the time.
func (l *liveness) reported(id model.NodeID, applied, hw int64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.progress == nil {
		l.progress = map[model.NodeID]progress{}
	}
	prev, ok := l.progress[id]
	l.progress[id] = nextProgress(prev, ok, applied, hw, now)
}

func (l *liveness) progressSnapshot() map[model.NodeID]progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.progress)
}
