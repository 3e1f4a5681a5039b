package controller

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// Registration is a broker's BrokerRegistration request.
type Registration struct {
	NodeID      model.NodeID
	ClusterID   string
	Incarnation string
	Rack        string
	Endpoints   []metadata.Endpoint
	// Features are the feature levels the broker supports.
	Features []metadata.FeatureRange
	// LogDirs are the directory IDs of its online log directories
	// (KIP-858).
	LogDirs []string
}

// RegisterBroker registers a broker fenced and returns its broker epoch. A
// retry of the same incarnation gets the epoch it already has; a new
// incarnation (the broker restarted) replaces the registration, fenced
// again, and every partition it led is re-elected as if it had been fenced.
func (c *Controller) RegisterBroker(ctx context.Context, r Registration) (int64, *kerr.Error, string) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		f := proposeFailure(err)
		return 0, f.err, f.msg
	}
	img := c.Image()
	if r.ClusterID != img.ClusterID() {
		return 0, kerr.InconsistentClusterID, fmt.Sprintf("broker %d is of cluster %s, this is %s", r.NodeID, r.ClusterID, img.ClusterID())
	}
	if r.NodeID < 0 {
		return 0, kerr.InvalidRequest, "negative broker id"
	}
	if f := registrationFeatureFailure(img, r.Features); f != nil {
		c.log.Warn("a broker that does not support the finalized feature levels was refused", "broker", r.NodeID, "reason", f.msg)
		return 0, f.err, f.msg
	}
	if have, ok := img.Broker(r.NodeID); ok && have.Incarnation == r.Incarnation {
		c.addObserverLocked(r)
		return have.Epoch, nil, ""
	}
	recs := []metadata.Record{metadata.BrokerRegistration{
		NodeID: r.NodeID, Incarnation: r.Incarnation, Rack: r.Rack, Endpoints: r.Endpoints, Fenced: true, Features: r.Features,
		FencedAtMs: c.clock.Now().UnixMilli(),
		LogDirs:    r.LogDirs,
	}}
	// A restarted broker's old self is gone: what it led needs a leader.
	c.live.clearShutdown(r.NodeID)
	next, err := img.Apply(recs...)
	if err != nil {
		return 0, kerr.InvalidRegistration, err.Error()
	}
	recs = append(recs, c.elections(next, func(id model.NodeID) bool { return id != r.NodeID && c.usable(img, id) }, nil)...)
	if err := c.proposeLocked(ctx, recs); err != nil {
		f := proposeFailure(err)
		return 0, f.err, f.msg
	}
	c.live.heard(r.NodeID, c.clock.Now())
	c.addObserverLocked(r)
	b, _ := c.Image().Broker(r.NodeID)
	return b.Epoch, nil, ""
}

// addObserverLocked makes a registering broker that is not a voter (a
// broker-only node) a Raft non-voter at its inter-broker listener, where it
// serves Raft, so the metadata log reaches it; a voter, or a non-voter
// already at that address, is left alone. It runs on every registration,
// so a broker whose address changed, or whose earlier addition failed, is
// added on its next one. The broker learns nothing until then: its
// heartbeats keep it fenced until it has applied the log up to its
// registration.
func (c *Controller) addObserverLocked(r Registration) {
	if c.raft == nil || c.stream == nil {
		return
	}
	addr := interBrokerAddr(c.static.String("inter.broker.listener.name"), r.Endpoints)
	if addr == "" {
		c.log.Warn("a broker registered without an inter-broker listener; it cannot follow the metadata log", "broker", r.NodeID)
		return
	}
	cf := c.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		c.log.Warn("reading the quorum configuration failed", "err", err)
		return
	}
	id := raft.ServerID(nodeResource(r.NodeID))
	for _, s := range cf.Configuration().Servers {
		if s.ID == id && (s.Suffrage == raft.Voter || s.Address == raft.ServerAddress(addr)) {
			return
		}
	}
	if err := c.raft.AddNonvoter(id, raft.ServerAddress(addr), 0, defaultApplyTimeout).Error(); err != nil {
		c.log.Warn("adding a broker to the metadata quorum as a non-voter failed", "broker", r.NodeID, "addr", addr, "err", err)
		return
	}
	c.log.Info("a broker-only node follows the metadata log", "broker", r.NodeID, "addr", addr)
}

// interBrokerAddr is a registration's inter-broker endpoint as host:port,
// "" when it has none.
func interBrokerAddr(name string, eps []metadata.Endpoint) string {
	ep, ok := metadata.InterBrokerEndpoint(name, eps)
	if !ok {
		return ""
	}
	return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
}

// Heartbeat is a broker's BrokerHeartbeat request.
type Heartbeat struct {
	NodeID        model.NodeID
	Epoch         int64
	AppliedOffset int64 // the metadata offset the broker has applied
	WantFence     bool
	WantShutDown  bool
	// OfflineLogDirs are the directory IDs of its log directories that
	// failed (KIP-858).
	OfflineLogDirs []string
}

// HeartbeatResult is the answer.
type HeartbeatResult struct {
	Err            *kerr.Error
	IsCaughtUp     bool
	IsFenced       bool
	ShouldShutDown bool
}

// BrokerHeartbeat records that a broker is alive and moves it through its
// states: a fenced broker that has applied the metadata up to its
// registration is unfenced, and partitions without a leader that it can
// lead get it; a broker that wants to shut down loses its leaderships to
// other in-sync replicas first, and is told to shut down once it leads
// nothing (controlled shutdown).
func (c *Controller) BrokerHeartbeat(ctx context.Context, h Heartbeat) HeartbeatResult {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return HeartbeatResult{Err: kerr.NotController}
	}
	img := c.Image()
	b, ok := img.Broker(h.NodeID)
	if !ok || b.Epoch != h.Epoch {
		return HeartbeatResult{Err: kerr.StaleBrokerEpoch}
	}
	now := c.clock.Now()
	c.live.heard(h.NodeID, now)
	c.live.reported(h.NodeID, h.AppliedOffset, img.Offset(), now)
	caughtUp := h.AppliedOffset >= b.Epoch
	var recs []metadata.Record
	if change := offlineDirsChange(b, h.OfflineLogDirs); change != nil {
		// Its replicas in those directories leave every ISR and lose
		// their leaderships now, in the same batch, as Kafka's
		// handleDirectoriesOffline; the rest of the heartbeat's work
		// sees the new directories.
		next, err := img.Apply(*change)
		if err != nil {
			return HeartbeatResult{Err: kerr.UnknownServerError}
		}
		c.log.Warn("log directories of a broker offline; its replicas there leave the ISRs", "broker", h.NodeID,
			"offline", fmt.Sprint(h.OfflineLogDirs), "remaining", fmt.Sprint(change.LogDirs))
		recs = append(recs, *change)
		recs = append(recs, c.elections(next, func(id model.NodeID) bool { return c.usable(img, id) }, nil)...)
		if next, err = next.Apply(recs[1:]...); err == nil {
			img = next
			// The balancer's down timeout for the replicas there counts
			// from now, not from its next round.
			c.bal.noteOfflineDirs(img, now)
		}
	}
	switch {
	case h.WantShutDown:
		c.live.shuttingDown(h.NodeID)
		alive := func(id model.NodeID) bool { return id != h.NodeID && c.usable(img, id) }
		recs = c.elections(img, alive, nil)
		// Fenced in the same batch once the moves leave it leading nothing,
		// as Kafka's controller does when a controlled shutdown completes.
		if next, err := img.Apply(recs...); err == nil && next.LeadsNothing(h.NodeID) && !b.Fenced {
			recs = append(recs, metadata.BrokerFence{NodeID: h.NodeID, Epoch: b.Epoch, Fenced: true, FencedAtMs: now.UnixMilli()})
		}
	case h.WantFence && !b.Fenced:
		recs = append(recs, metadata.BrokerFence{NodeID: h.NodeID, Epoch: b.Epoch, Fenced: true, FencedAtMs: now.UnixMilli()})
		recs = append(recs, c.elections(img, func(id model.NodeID) bool { return id != h.NodeID && c.usable(img, id) }, nil)...)
	case b.Fenced && caughtUp && !h.WantFence:
		recs = append(recs, metadata.BrokerFence{NodeID: h.NodeID, Epoch: b.Epoch, Fenced: false})
		usable := func(id model.NodeID) bool { return id == h.NodeID || c.usable(img, id) }
		recs = append(recs, c.elections(img, usable, &h.NodeID)...)
	}
	if len(recs) > 0 {
		if err := c.proposeLocked(ctx, recs); err != nil {
			return HeartbeatResult{Err: proposeFailure(err).err}
		}
		img = c.Image()
		b, _ = img.Broker(h.NodeID)
	}
	return HeartbeatResult{
		IsCaughtUp:     caughtUp,
		IsFenced:       b.Fenced,
		ShouldShutDown: h.WantShutDown && img.LeadsNothing(h.NodeID),
	}
}

// offlineDirsChange is the registration change that takes a broker's
// newly offline log directories out of its online ones, nil when a
// heartbeat reports none it had not reported.
func offlineDirsChange(b metadata.BrokerImage, offline []string) *metadata.BrokerRegistrationChange {
	online := slices.DeleteFunc(slices.Clone(b.LogDirs), func(d string) bool { return slices.Contains(offline, d) })
	if len(online) == len(b.LogDirs) {
		return nil
	}
	return &metadata.BrokerRegistrationChange{NodeID: b.NodeID, Epoch: b.Epoch, LogDirs: online}
}

// usable reports whether a broker may lead and stay in ISRs: registered,
// unfenced and not shutting down.
func (c *Controller) usable(img *metadata.Image, id model.NodeID) bool {
	b, ok := img.Broker(id)
	return ok && !b.Fenced && !c.live.isShuttingDown(id)
}

// elections returns the partition changes that keep every partition led by
// a usable broker with an ISR of usable brokers, given which brokers are
// usable now: unusable brokers leave the ISR (unless it would be empty, as
// in Kafka the last member stays, so that it alone can return as leader), a
// leader that is unusable is replaced by the first usable ISR member in
// replica order, and a partition with no usable ISR member has no leader,
// unless unclean.leader.election.enable lets a usable out-of-sync replica
// lead. unfenced, when set, is a broker just unfenced: a leaderless
// partition whose ISR holds it gets it as leader. A replica on a log
// directory its broker reported offline is not usable, whatever its
// broker (KIP-858).
func (c *Controller) elections(img *metadata.Image, brokerUsable func(model.NodeID) bool, unfenced *model.NodeID) []metadata.Record {
	var recs []metadata.Record
	values := c.brokerValues(img)
	for _, t := range img.Topics() {
		var unclean *bool
		for _, p := range t.Partitions {
			// A replica on a log directory its broker reported offline
			// is as good as a fenced broker's (KIP-858).
			usable := func(id model.NodeID) bool { return brokerUsable(id) && img.ReplicaOnline(p, id) }
			isr := slices.DeleteFunc(slices.Clone(p.ISR), func(id model.NodeID) bool { return !usable(id) })
			leader := p.Leader
			if leader == metadata.NoLeader || !usable(leader) {
				leader = metadata.NoLeader
				for _, r := range p.Replicas {
					if slices.Contains(isr, r) {
						leader = r
						break
					}
				}
			}
			if leader == metadata.NoLeader && len(isr) == 0 {
				if unclean == nil {
					u := uncleanElection(values, img.TopicConfig(t.Name))
					unclean = &u
				}
				if *unclean {
					for _, r := range p.Replicas {
						if usable(r) {
							leader, isr = r, []model.NodeID{r}
							c.log.Warn("unclean leader election: an out-of-sync replica leads; records the old ISR had and it lacks are lost",
								"partition", model.TopicPartition{Topic: t.Name, Partition: p.Partition}.String(),
								"leader", r, "old_isr", fmt.Sprint(p.ISR), "old_leader_epoch", p.LeaderEpoch)
							break
						}
					}
				}
			}
			if len(isr) == 0 {
				isr = slices.Clone(p.ISR) // the last members stay, to lead again
				if len(isr) > 1 {
					isr = isr[:1]
				}
			}
			if leader == p.Leader && slices.Equal(isr, p.ISR) {
				continue
			}
			if p.Reassigning() {
				// An unclean election may leave an ISR of target
				// replicas only, which completes the move, as Kafka's
				// PartitionChangeBuilder does on every change.
				target := partitionTarget{replicas: p.Replicas, isr: isr, adding: p.AddingReplicas, removing: p.RemovingReplicas}
				if done := completeReassignment(target); len(done.adding) == 0 && len(done.removing) == 0 {
					if rec := changeTo(t.ID, p, target, usable); rec != nil {
						recs = append(recs, *rec)
					}
					continue
				}
			}
			ch := metadata.PartitionChange{TopicID: t.ID, Partition: p.Partition, ISR: isr}
			if leader != p.Leader {
				ch.Leader = &leader
			}
			recs = append(recs, ch)
		}
	}
	return recs
}

// uncleanElection resolves unclean.leader.election.enable for a topic.
func uncleanElection(broker config.Values, overrides map[string]string) bool {
	v, err := config.ResolveTopic(broker, overrides)
	if err != nil {
		return false
	}
	return v.Bool("unclean.leader.election.enable")
}

// liveness is the active controller's memory of heartbeats. It is not in
// the metadata log: a newly active controller gives every broker a full
// session before fencing it, except the broker of the voter that led the
// quorum before it (sessionsOnElection).
type liveness struct {
	mu       sync.Mutex
	last     map[model.NodeID]time.Time
	shutting map[model.NodeID]bool
	// progress is each broker's metadata log as its heartbeats report it
	// (DescribeQuorum); unlike last, a new controller starts it empty.
	progress map[model.NodeID]progress
}

func (l *liveness) heard(id model.NodeID, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[model.NodeID]time.Time{}
	}
	l.last[id] = now
}

func (l *liveness) shuttingDown(id model.NodeID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shutting == nil {
		l.shutting = map[model.NodeID]bool{}
	}
	l.shutting[id] = true
}

func (l *liveness) clearShutdown(id model.NodeID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.shutting, id)
}

func (l *liveness) isShuttingDown(id model.NodeID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shutting[id]
}

// forget drops what is known of an unregistered broker.
func (l *liveness) forget(id model.NodeID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, id)
	delete(l.shutting, id)
	delete(l.progress, id)
}

// reset starts every broker's session now, on becoming active.
func (l *liveness) reset(ids []model.NodeID, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = map[model.NodeID]time.Time{}
	l.shutting = map[model.NodeID]bool{}
	l.progress = map[model.NodeID]progress{}
	for _, id := range ids {
		l.last[id] = now
	}
}

// expired returns the brokers not heard from for timeout, and when the
// first session of the others ends if no heartbeat comes (the zero time
// when none is left). A broker never heard from by this controller
// (registered before it became active, or since) starts its session now.
func (l *liveness) expired(ids []model.NodeID, now time.Time, timeout time.Duration) ([]model.NodeID, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[model.NodeID]time.Time{}
	}
	var out []model.NodeID
	var next time.Time
	for _, id := range ids {
		t, ok := l.last[id]
		if !ok {
			t = now
			l.last[id] = now
		}
		if now.Sub(t) > timeout {
			out = append(out, id)
		} else if end := t.Add(timeout); next.IsZero() || end.Before(next) {
			next = end
		}
	}
	return out, next
}

// fenceExpired fences every unfenced broker whose session has expired and
// re-elects what it led, in one batch, and returns when the next session
// ends unless a heartbeat renews it (zero: none to watch). The active
// controller runs it when that time comes (watchSessions).
func (c *Controller) fenceExpired(ctx context.Context) (time.Time, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return time.Time{}, nil
	}
	img := c.Image()
	var live []model.NodeID
	for _, b := range img.Brokers() {
		if !b.Fenced {
			live = append(live, b.NodeID)
		}
	}
	gone, next := c.live.expired(live, c.clock.Now(), c.cfg.SessionTimeout)
	if len(gone) == 0 {
		return next, nil
	}
	var recs []metadata.Record
	for _, id := range gone {
		b, _ := img.Broker(id)
		recs = append(recs, metadata.BrokerFence{NodeID: id, Epoch: b.Epoch, Fenced: true, FencedAtMs: c.clock.Now().UnixMilli()})
		c.log.Warn("fencing a broker whose heartbeats stopped", "broker", id, "session_timeout", c.cfg.SessionTimeout)
	}
	recs = append(recs, c.elections(img, func(id model.NodeID) bool { return !slices.Contains(gone, id) && c.usable(img, id) }, nil)...)
	return next, c.proposeLocked(ctx, recs)
}

// watchSessions fences brokers whose heartbeats stopped, while this node is
// the active controller. It wakes when the first session would end, as
// Kafka's controller schedules its stale-broker check, so a dead broker is
// fenced within a few milliseconds of its session; a fixed tick of a
// fraction of the session added up to that fraction to every failover
// (375 ms with a 3 s session). It also wakes every session/8 at the
// latest, for brokers that register or are unfenced meanwhile.
func (c *Controller) watchSessions(ctx context.Context) {
	every := max(c.cfg.SessionTimeout/8, 10*time.Millisecond)
	timer := time.NewTimer(every) // Raft and heartbeats are on the wall clock
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next, err := c.fenceExpired(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.Warn("fencing expired brokers failed", "err", err)
		}
		wait := every
		if !next.IsZero() {
			// A millisecond past the end: a session ends when it is
			// over, not at its last instant (expired's ">").
			wait = min(max(next.Sub(c.clock.Now())+time.Millisecond, 5*time.Millisecond), every)
		}
		timer.Reset(wait)
	}
}

// UnregisterBroker removes a broker's registration (UnregisterBroker, API
// 64), as Kafka's controller does: the broker leaves every ISR, what it
// led is elected elsewhere (or left without a leader, its last ISR member
// kept, as when it is fenced), and the registration goes, in one batch.
// Its replicas stay in the replica lists: moving them off first is the
// decommission's part (samsa cluster decommission). A broker-only node also
// leaves the Raft configuration, where it followed the metadata log as a
// non-voter, so the leader stops sending it entries; a voter's place in
// the quorum is RemoveVoter's business, not this.
//
// A broker still running is not refused (Kafka's controller does not
// refuse it either): its next heartbeat finds its epoch gone. Kafka's
// broker then heartbeats in vain until it restarts; Samsa's registers again
// at once, fenced, and rejoins once it has caught up, so unregistering a
// live broker only costs it its leaderships. The operator stops it first.
// BROKER_ID_NOT_REGISTERED for a broker the image does not have.
func (c *Controller) UnregisterBroker(ctx context.Context, id model.NodeID) (*kerr.Error, string) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		f := proposeFailure(err)
		return f.err, f.msg
	}
	img := c.Image()
	b, ok := img.Broker(id)
	if !ok {
		return kerr.BrokerIDNotRegistered, fmt.Sprintf("Broker ID %d is not currently registered", id)
	}
	recs := c.elections(img, func(n model.NodeID) bool { return n != id && c.usable(img, n) }, nil)
	recs = append(recs, metadata.BrokerUnregistration{NodeID: id, Epoch: b.Epoch})
	if err := c.proposeLocked(ctx, recs); err != nil {
		f := proposeFailure(err)
		return f.err, f.msg
	}
	if !b.Fenced {
		c.log.Warn("unregistered a broker that was not fenced; if it is still running it will register again at its next heartbeat",
			"broker", id, "broker_epoch", b.Epoch)
	} else {
		c.log.Info("unregistered a broker", "broker", id, "broker_epoch", b.Epoch)
	}
	c.live.forget(id)
	c.removeObserverLocked(id)
	return nil, ""
}

// removeObserverLocked takes an unregistered broker-only node out of the
// Raft configuration, where addObserverLocked put it; a voter stays.
func (c *Controller) removeObserverLocked(id model.NodeID) {
	if c.raft == nil || c.stream == nil {
		return
	}
	cf := c.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		c.log.Warn("reading the quorum configuration failed", "err", err)
		return
	}
	sid := raft.ServerID(nodeResource(id))
	for _, s := range cf.Configuration().Servers {
		if s.ID != sid || s.Suffrage == raft.Voter {
			continue
		}
		if err := c.raft.RemoveServer(sid, 0, defaultApplyTimeout).Error(); err != nil {
			c.log.Warn("removing an unregistered broker from the metadata quorum's non-voters failed", "broker", id, "err", err)
			return
		}
		if guard, ok := c.transport.(*heartbeatGuard); ok {
			guard.forget(sid)
		}
		c.log.Info("an unregistered broker-only node no longer follows the metadata log", "broker", id)
	}
}
