package controller

// The automatic balancer (samsa.balancer.enable, docs/DESIGN-balance.md
// "The controller's loop"): on the active controller, every
// samsa.balancer.interval.ms and at once when a broker is fenced,
// registered or marked draining, a setting changes or a move ends, one
// round:
//
//  1. asks the brokers for their replicas' sizes (Config.ReplicaSizes,
//     DescribeLogDirs over the Kafka protocol), outside the write lock;
//  2. under writeMu, against the current image: cancels the moves that add
//     a replica on a broker being evacuated (stuckMoves), builds the
//     planner's input (clusterState), with every reassignment in progress
//     as InProgress, and calls balance.Propose;
//  3. turns the plan into the records AlterPartitionReassignments writes
//     (startTarget, changeTo), a leader move's preferred-leader election in
//     the same record, preferred-leader elections of partitions whose
//     preferred replica is back in the ISR, and the replication throttle
//     of the moves in progress (throttleRecords), and commits them as one
//     Raft entry.
//
// Everything the round decides from is in the image, so a new active
// controller picks up where the old one stopped: its moves are
// reassignments in progress (not planned again, counted against
// samsa.balancer.max.concurrent.moves), a broker's down time is the
// fencing time recorded in the metadata, the drain flag is a config.

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// ReplicaSizes returns the size in bytes of one replica of each partition
// (its leader's log, or another replica's when the leader did not answer),
// asked of the brokers registered in img. The broker supplies it; the
// controller has no log of its own to measure.
type ReplicaSizes func(ctx context.Context, img *metadata.Image) (map[model.TopicPartition]int64, error)

// Balancer states, as BalancerStatus.State and the
// samsa_balancer_state metric report them.
const (
	BalancerOff      = "off"      // samsa.balancer.enable is false
	BalancerStandby  = "standby"  // on, but this node is not the active controller
	BalancerBalanced = "balanced" // nothing moving, nothing to move, nothing noted
	BalancerMoving   = "moving"   // reassignments in progress
	BalancerBlocked  = "blocked"  // nothing moving, but the plan notes what it cannot do
)

// BalancerMove and BalancerStatus are balance.StatusMove and balance.Status:
// the shape lives in the leaf package so that the clients reading GET
// /v1/balancer (samsa cluster status, the console) decode the very type
// the controller reports.
type (
	BalancerMove   = balance.StatusMove
	BalancerStatus = balance.Status
)

// balancer is the controller's balancer state. The loop goroutine
// (watchBalancer) owns everything but mu's fields.
type balancer struct {
	log *slog.Logger
	// started are the moves this controller's balancer started and has
	// not yet seen end, for the completed count.
	started map[model.TopicPartition]bool
	// offlineSince is when this controller first knew each failed log
	// directory that replicas are assigned to (guarded by the
	// controller's writeMu): the down timeout of their replicas counts
	// from then.
	offlineSince map[offlineDir]time.Time
	// lastNotes and lastState are what was last logged, so that a plan is
	// logged once per change, not every round.
	lastNotes string
	lastState string

	mu struct {
		sync.Mutex
		status BalancerStatus
	}
}

func newBalancer(log *slog.Logger) *balancer {
	b := &balancer{log: log.With("component", "balancer"), started: map[model.TopicPartition]bool{}, offlineSince: map[offlineDir]time.Time{}}
	b.mu.status = BalancerStatus{State: BalancerOff, InProgress: []BalancerMove{}, Moves: []BalancerMove{}, Notes: []string{}}
	return b
}

// noteOfflineDirs keeps offlineSince to the failed directories img
// assigns replicas to: a new one counts from now, one repaired (or no
// longer holding replicas) is forgotten. The caller holds writeMu.
func (b *balancer) noteOfflineDirs(img *metadata.Image, now time.Time) {
	offline := offlineDirs(img)
	for d := range b.offlineSince {
		if !offline[d] {
			delete(b.offlineSince, d)
		}
	}
	for d := range offline {
		if _, ok := b.offlineSince[d]; !ok {
			b.offlineSince[d] = now
		}
	}
}

// BalancerStatus reports the balancer's state as of its last round.
func (c *Controller) BalancerStatus() BalancerStatus {
	c.bal.mu.Lock()
	st := c.bal.mu.status
	c.bal.mu.Unlock()
	st.NodeID, st.ControllerID = c.cfg.NodeID, c.ControllerID()
	st.Active = c.Active()
	if !st.Active && st.Enabled {
		st.State = BalancerStandby
	}
	return st
}

func (b *balancer) update(f func(st *BalancerStatus)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(&b.mu.status)
}

// watchBalancer runs the balancer's rounds while this node is the active
// controller and samsa.balancer.enable is true, read from the metadata on
// every change, so turning it on or off takes effect at once and survives
// a failover. Rounds are at least a second apart (or the interval, if
// shorter): a burst of changes costs one round, not one each.
func (c *Controller) watchBalancer(ctx context.Context) {
	var (
		lastTrigger string
		last, due   time.Time
	)
	timer := time.NewTimer(0) // the schedule is the controller's clock; the timer only wakes
	defer timer.Stop()
	for {
		ch := c.Changed()
		img := c.Image()
		now := c.clock.Now()
		s := readBalancerSettings(c.brokerValues(img))
		wait := time.Second
		c.bal.update(func(st *BalancerStatus) {
			st.Enabled, st.Throttle = s.enabled, s.throttle
			if !s.enabled {
				st.State = BalancerOff
			}
		})
		switch {
		case !s.enabled || !c.Active():
			if lastTrigger != "" && !s.enabled {
				c.bal.log.Info("balancer turned off (samsa.balancer.enable=false): moves in progress finish, no new ones start")
			}
			lastTrigger, due = "", time.Time{}
			c.bal.lastNotes, c.bal.lastState = "", ""
		default:
			gap := min(s.interval, time.Second)
			pending := balanceTrigger(img, s) != lastTrigger || !now.Before(due)
			switch {
			case pending && now.Sub(last) < gap:
				wait = gap - now.Sub(last)
			case pending:
				if lastTrigger == "" {
					c.bal.log.Info("balancer on", "interval", s.interval, "replica_spread", s.opts.ReplicaSpread,
						"leader_spread", s.opts.LeaderSpread, "bytes_spread", s.opts.BytesSpread, "max_concurrent_moves", s.opts.MaxMoves,
						"max_leader_moves", s.opts.MaxLeaderMoves, "broker_down_timeout", s.opts.DownTimeout, "throttle_bytes_per_second", s.throttle)
				}
				if err := c.balanceRound(ctx, s); err != nil && ctx.Err() == nil {
					c.bal.log.Warn("balancer round failed; trying again at the next change or interval", "err", err)
				}
				now = c.clock.Now()
				last, due = now, now.Add(s.interval)
				// Taken after the round: its own records do not trigger
				// another; a move ending later does.
				lastTrigger = balanceTrigger(c.Image(), s)
				wait = s.interval
			default:
				wait = due.Sub(now)
			}
			if d := nextDownDeadline(c.Image(), s.opts.DownTimeout, now); !d.IsZero() {
				wait = min(wait, d.Sub(now)+time.Millisecond)
			}
			wait = min(wait, time.Second) // a manual clock is polled
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			return
		case <-ch:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-timer.C:
		}
	}
}

// balanceRound plans once and starts what the plan allows.
func (c *Controller) balanceRound(ctx context.Context, s balancerSettings) error {
	if !s.enabled {
		return nil
	}
	var sizes map[model.TopicPartition]int64
	sizesNote := ""
	if s.opts.BytesSpread > 0 {
		var err error
		switch {
		case c.cfg.ReplicaSizes == nil:
			err = errors.New("no source of replica sizes")
		default:
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			sizes, err = c.cfg.ReplicaSizes(sctx, c.Image())
			cancel()
		}
		if err != nil {
			// Counts still balance; bytes wait for the next round that
			// knows them.
			s.opts.BytesSpread = 0
			sizesNote = "replica sizes unknown (" + err.Error() + "): bytes not balanced this round"
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.checkWritableLocked() != nil {
		return nil
	}
	now := c.clock.Now()
	img := c.Image()
	usable := func(id model.NodeID) bool { return c.usable(img, id) }
	completed := c.bal.countCompleted(img)

	recs, decisions, cancelled := c.cancelStuckMoves(img, s, now)
	planned := img
	if len(recs) > 0 {
		next, err := img.Apply(recs...)
		if err != nil {
			return err
		}
		planned = next
	}
	values := c.brokerValues(planned)
	c.bal.noteOfflineDirs(planned, now)
	st, inProgress := clusterState(planned, values, func(id model.NodeID) bool { return c.usable(planned, id) }, sizes, c.bal.offlineSince, now)
	opts := s.opts
	opts.InProgress = inProgress
	plan := balance.Propose(st, opts)

	var started []model.TopicPartition
	leaderMoves := 0
	for _, m := range plan.Moves {
		rec, why := moveRecord(planned, m, usable)
		if rec == nil {
			if why != "" {
				plan.Notes = append(plan.Notes, m.TopicPartition.String()+": "+why)
			}
			continue
		}
		recs = append(recs, *rec)
		decisions = append(decisions, BalancerMove{Topic: m.Topic, Partition: m.Partition, Kind: m.Kind.String(), From: m.From, To: m.To, Reason: m.Reason})
		if m.Kind == balance.MoveReplicas {
			started = append(started, m.TopicPartition)
		} else {
			leaderMoves++
		}
	}
	var elections []plannedElection
	if len(recs) > 0 {
		next, err := img.Apply(recs...)
		if err != nil {
			return err
		}
		planned = next
	}
	elections = preferredElections(planned, s.opts.MaxLeaderMoves-leaderMoves, func(id model.NodeID) bool {
		return usable(id) && evacuating(planned, id, s.opts.DownTimeout, now) == ""
	})
	for _, e := range elections {
		recs = append(recs, e.record)
	}
	if s.throttle > 0 {
		if len(elections) > 0 {
			next, err := img.Apply(recs...)
			if err != nil {
				return err
			}
			planned = next
		}
		recs = append(recs, throttleRecords(planned, s.throttle)...)
	}
	if len(recs) > 0 {
		if err := c.proposeLocked(ctx, recs); err != nil {
			return err
		}
	}
	c.bal.recordRound(c.Image(), now, plan, sizesNote, decisions, started, cancelled, completed, len(elections))
	for _, d := range decisions {
		c.bal.log.Info("balancer decision", "kind", d.Kind, "partition", model.TopicPartition{Topic: d.Topic, Partition: d.Partition}.String(),
			"from", d.From, "to", d.To, "reason", d.Reason)
	}
	for _, e := range elections {
		c.bal.log.Debug("balancer elected the preferred leader", "partition", model.TopicPartition{Topic: e.topic, Partition: e.before.Partition}.String(),
			"leader", *e.record.Leader, "old_leader", e.before.Leader)
	}
	if len(elections) > 0 {
		c.bal.log.Info("balancer moved leadership to preferred replicas back in the ISR", "elections", len(elections))
	}
	c.bal.logNotes(sizesNote, plan.Notes)
	return nil
}

// cancelStuckMoves builds the cancellations of stuckMoves, as a cancelling
// AlterPartitionReassignments does (revertTarget); a move that cannot be
// cancelled without an unclean election stays and is noted.
func (c *Controller) cancelStuckMoves(img *metadata.Image, s balancerSettings, now time.Time) ([]metadata.Record, []BalancerMove, []model.TopicPartition) {
	var recs []metadata.Record
	var decisions []BalancerMove
	var cancelled []model.TopicPartition
	usable := func(id model.NodeID) bool { return c.usable(img, id) }
	values := c.brokerValues(img)
	for _, sm := range stuckMoves(img, s.opts.DownTimeout, now) {
		t, _ := img.Topic(sm.tp.Topic)
		p := t.Partitions[sm.tp.Partition]
		target, f := revertTarget(p, uncleanElection(values, img.TopicConfig(sm.tp.Topic)))
		if f != nil {
			c.bal.log.Warn("balancer cannot cancel a stuck move", "partition", sm.tp.String(), "reason", sm.reason, "err", f.msg)
			continue
		}
		if rec := changeTo(t.ID, p, target, usable); rec != nil {
			recs = append(recs, *rec)
			decisions = append(decisions, BalancerMove{Topic: sm.tp.Topic, Partition: sm.tp.Partition, Kind: "cancel",
				From: p.Replicas, To: target.replicas, Reason: sm.reason})
			cancelled = append(cancelled, sm.tp)
		}
	}
	return recs, decisions, cancelled
}

// moveRecord is the record that starts one move of the plan, as
// AlterPartitionReassignments writes it, or why it is not started: the
// partition changed since the plan (a move started meanwhile by someone
// else, a deleted topic), or a target broker is not registered. A leader
// move's record also elects the new preferred replica when it is in the
// ISR and usable, so the leadership moves in the same entry.
func moveRecord(img *metadata.Image, m balance.Move, usable func(model.NodeID) bool) (*metadata.PartitionChange, string) {
	t, ok := img.Topic(m.Topic)
	if !ok || int(m.Partition) >= len(t.Partitions) {
		return nil, "the topic is gone"
	}
	p := t.Partitions[m.Partition]
	switch {
	case p.Reassigning():
		return nil, "being reassigned already: left alone"
	case !slices.Equal(p.Replicas, m.From):
		return nil, "the replicas changed since the plan: planned again next round"
	}
	if f := checkReassignment(img, m.To); f != nil {
		return nil, f.msg
	}
	rec := changeTo(t.ID, p, startTarget(p, m.To), usable)
	if rec == nil {
		return nil, ""
	}
	if m.Kind == balance.MoveLeader {
		if lead := m.To[0]; lead != p.Leader && slices.Contains(p.ISR, lead) && usable(lead) {
			rec.Leader = &lead
		}
	}
	return rec, ""
}

// preferredElections elects the preferred replica of partitions led by
// another broker, when it is in the ISR and eligible (usable and not being
// evacuated), at most limit of them, partitions being reassigned excepted:
// the balancer's leader counts are preferred leaders, and a replica move
// that completes leaves the leadership where it was.
func preferredElections(img *metadata.Image, limit int, eligible func(model.NodeID) bool) []plannedElection {
	var out []plannedElection
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if len(out) >= limit {
				return out
			}
			if p.Reassigning() || len(p.Replicas) == 0 {
				continue
			}
			pref := p.Replicas[0]
			if pref == p.Leader || !slices.Contains(p.ISR, pref) || !eligible(pref) {
				continue
			}
			lead := pref
			out = append(out, plannedElection{topic: t.Name, before: p,
				record: metadata.PartitionChange{TopicID: t.ID, Partition: p.Partition, Leader: &lead}})
		}
	}
	return out
}

// countCompleted forgets the moves this balancer started that are no
// longer in progress and returns how many ended.
func (b *balancer) countCompleted(img *metadata.Image) int {
	n := 0
	for tp := range b.started {
		if p, ok := img.Partition(tp); !ok || !p.Reassigning() {
			delete(b.started, tp)
			if ok {
				n++
			}
		}
	}
	return n
}

// recordRound keeps the round's outcome for BalancerStatus.
func (b *balancer) recordRound(img *metadata.Image, now time.Time, plan balance.Plan, sizesNote string, decisions []BalancerMove,
	started, cancelled []model.TopicPartition, completed, elections int) {
	for _, tp := range started {
		b.started[tp] = true
	}
	for _, tp := range cancelled {
		delete(b.started, tp)
	}
	inProgress := []BalancerMove{}
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if p.Reassigning() {
				inProgress = append(inProgress, BalancerMove{Topic: t.Name, Partition: p.Partition, From: p.OriginalReplicas(),
					To: p.TargetReplicas(), Adding: p.AddingReplicas, Removing: p.RemovingReplicas})
			}
		}
	}
	state := BalancerBalanced
	switch {
	case len(inProgress) > 0:
		state = BalancerMoving
	case len(plan.Notes) > 0:
		state = BalancerBlocked
	}
	b.update(func(st *BalancerStatus) {
		st.State, st.LastPlan = state, now.UTC().Format(time.RFC3339Nano)
		st.InProgress, st.Notes = inProgress, append([]string{}, plan.Notes...)
		st.Brokers, st.After = plan.Before, plan.After
		st.SizesNote = sizesNote
		if len(decisions) > 0 {
			st.Moves = decisions
		}
		st.MovesStarted += uint64(len(started))
		st.MovesCancelled += uint64(len(cancelled))
		st.MovesCompleted += uint64(completed)
		st.LeaderElections += uint64(elections)
	})
	if state != b.lastState {
		b.log.Info("balancer state", "state", state, "in_progress", len(inProgress), "notes", len(plan.Notes))
		b.lastState = state
	}
}

// durations in notes ("down for 31m0s") change every round; they are not
// a change of the plan.
var noteDuration = regexp.MustCompile(`\d+(\.\d+)?(h|ms|m|s)`)

// logNotes logs the plan's notes, and why sizes are unknown, when they
// differ from the last ones logged: the explained no-op is logged once,
// not every round.
func (b *balancer) logNotes(sizesNote string, notes []string) {
	key := noteDuration.ReplaceAllString(sizesNote+"\n"+strings.Join(notes, "\n"), "_")
	if key == b.lastNotes {
		return
	}
	b.lastNotes = key
	if sizesNote != "" {
		b.log.Info("balancer balances counts only", "note", sizesNote)
	}
	for _, n := range notes {
		b.log.Info("balancer cannot do everything it would", "note", n)
	}
}
