package controller

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// drainingConfig is the per-broker dynamic config that marks a broker for
// decommission. A config rather than a new API: kafka-configs.sh and
// every admin client set it (IncrementalAlterConfigs on the broker), it is
// in the metadata log (a new active controller knows it), DescribeConfigs
// shows it, and taking it away ends the drain.
const drainingConfig = "samsa.broker.draining"

// balancerSettings are the samsa.balancer.* configs as one round reads
// them, from the static config with the cluster-default dynamic configs
// layered on (brokerValues).
type balancerSettings struct {
	enabled  bool
	interval time.Duration
	// throttle is the replication throttle of moves in bytes per second;
	// 0 leaves the throttle configs alone.
	throttle int64
	// opts are the planner's options, without InProgress.
	opts balance.Options
}

func readBalancerSettings(v config.Values) balancerSettings {
	opts := balance.DefaultOptions()
	opts.ReplicaSpread = int(v.Int("samsa.balancer.replica.spread"))
	opts.LeaderSpread = int(v.Int("samsa.balancer.leader.spread"))
	opts.BytesSpread = v.Double("samsa.balancer.bytes.spread")
	opts.MaxMoves = int(v.Int("samsa.balancer.max.concurrent.moves"))
	opts.MaxLeaderMoves = int(v.Int("samsa.balancer.max.leader.moves"))
	opts.DownTimeout = time.Duration(v.Long("samsa.balancer.broker.down.timeout.ms")) * time.Millisecond
	// A reassignment here removes replicas only once every added one is in
	// the ISR (completeReassignment), so added replicas count toward min
	// ISR and partitions of RF 1 can move.
	opts.CountAddedReplicas = true
	return balancerSettings{
		enabled:  v.Bool("samsa.balancer.enable"),
		interval: time.Duration(v.Long("samsa.balancer.interval.ms")) * time.Millisecond,
		throttle: v.Long("samsa.balancer.throttle.bytes.per.second"),
		opts:     opts,
	}
}

// draining reports whether the operator marked a broker for decommission.
// Booleans are case-insensitive, as Kafka parses them.
func draining(img *metadata.Image, id model.NodeID) bool {
	return strings.EqualFold(img.BrokerConfig(nodeResource(id))[drainingConfig], "true")
}

// clusterState is the planner's input from the metadata image, pure:
//
//   - brokers: every registered broker with its rack; alive when unfenced
//     and usable (a broker in controlled shutdown is not); down since the
//     fencing time the metadata records (BrokerFence.FencedAtMs), so every
//     controller counts broker.down.timeout from the same instant;
//     draining from samsa.broker.draining;
//   - partitions: replicas (during a reassignment, the union of old and
//     new, as the planner expects), ISR, leader, the topic's resolved
//     min.insync.replicas, and the size of one replica from sizes
//     (missing: 0);
//   - offline replicas: those on a log directory their broker reported
//     failed, since when this controller first knew (offlineSince; the
//     metadata records no time, so after a failover the clock starts
//     again: a replica moves later, never sooner);
//   - in progress: every partition being reassigned, whoever started it,
//     so the planner leaves it alone and counts it against MaxMoves.
func clusterState(img *metadata.Image, values config.Values, usable func(model.NodeID) bool,
	sizes map[model.TopicPartition]int64, offlineSince map[offlineDir]time.Time, now time.Time) (balance.ClusterState, []model.TopicPartition) {
	st := balance.ClusterState{Now: now}
	for _, b := range img.Brokers() {
		br := balance.Broker{ID: b.NodeID, Rack: b.Rack, Alive: !b.Fenced && usable(b.NodeID), Draining: draining(img, b.NodeID)}
		if b.Fenced && b.FencedAtMs > 0 {
			br.DownSince = time.UnixMilli(b.FencedAtMs)
		}
		st.Brokers = append(st.Brokers, br)
	}
	var inProgress []model.TopicPartition
	for _, t := range img.Topics() {
		minISR := 1
		if v, err := config.ResolveTopic(values, img.TopicConfig(t.Name)); err == nil {
			minISR = int(v.Int("min.insync.replicas"))
		}
		for _, p := range t.Partitions {
			tp := model.TopicPartition{Topic: t.Name, Partition: p.Partition}
			bp := balance.Partition{TopicPartition: tp,
				Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR), Leader: p.Leader, MinISR: minISR, Bytes: sizes[tp]}
			for _, r := range p.Replicas {
				if _, ok := img.Broker(r); ok && !img.ReplicaOnline(p, r) {
					bp.Offline = append(bp.Offline, balance.OfflineReplica{Broker: r, Since: offlineSince[offlineDir{r, p.Directory(r)}]})
				}
			}
			st.Partitions = append(st.Partitions, bp)
			if p.Reassigning() {
				inProgress = append(inProgress, tp)
			}
		}
	}
	return st, inProgress
}

// offlineDir is a broker's failed log directory, by ID.
type offlineDir struct {
	broker model.NodeID
	dir    string
}

// offlineDirs lists the failed log directories replicas are assigned to:
// directories a registered broker holds replicas in but no longer lists
// online (KIP-858).
func offlineDirs(img *metadata.Image) map[offlineDir]bool {
	out := map[offlineDir]bool{}
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				if _, ok := img.Broker(r); ok && !img.ReplicaOnline(p, r) {
					out[offlineDir{r, p.Directory(r)}] = true
				}
			}
		}
	}
	return out
}

// evacuating reports why a broker's replicas must leave ("" when they
// stay), by the planner's rules: draining, or fenced for at least the
// down timeout by the recorded time.
func evacuating(img *metadata.Image, id model.NodeID, downTimeout time.Duration, now time.Time) string {
	b, ok := img.Broker(id)
	switch {
	case !ok:
		return "broker " + strconv.Itoa(int(id)) + " is not registered"
	case draining(img, id):
		return "broker " + strconv.Itoa(int(id)) + " is draining"
	case b.Fenced && b.FencedAtMs > 0 && downTimeout > 0 && now.Sub(time.UnixMilli(b.FencedAtMs)) >= downTimeout:
		return "broker " + strconv.Itoa(int(id)) + " has been down for " + now.Sub(time.UnixMilli(b.FencedAtMs)).Round(time.Second).String()
	}
	return ""
}

// stuckMove is a reassignment in progress that cannot finish as it is:
// one of the replicas it adds is on a broker being evacuated (drained, or
// down past the timeout), so the move would wait for it for ever or put
// data where it must not be.
type stuckMove struct {
	tp     model.TopicPartition
	reason string
}

// stuckMoves lists the reassignments to cancel, in topic and partition
// order. The planner places replicas again once they are cancelled.
func stuckMoves(img *metadata.Image, downTimeout time.Duration, now time.Time) []stuckMove {
	var out []stuckMove
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			for _, id := range p.AddingReplicas {
				if why := evacuating(img, id, downTimeout, now); why != "" {
					out = append(out, stuckMove{tp: model.TopicPartition{Topic: t.Name, Partition: p.Partition},
						reason: why + ": cancelling the move that adds a replica there"})
					break
				}
			}
		}
	}
	return out
}

// balanceTrigger is what, when it changes, makes the balancer plan at once
// instead of at its next interval: the brokers (registered, fenced,
// rack, draining), the balancer's settings and the partitions being
// reassigned (a move ended: the next may start). ISR and leader changes
// alone do not count: they come often and rarely change a plan.
func balanceTrigger(img *metadata.Image, s balancerSettings) string {
	var sb strings.Builder
	for _, b := range img.Brokers() {
		sb.WriteString(strconv.Itoa(int(b.NodeID)) + "/" + b.Rack + "/" + strconv.FormatBool(b.Fenced) + "/" +
			strconv.FormatBool(draining(img, b.NodeID)) + ";")
	}
	sb.WriteString("|" + strconv.FormatBool(s.enabled) + "/" + s.interval.String() + "/" + strconv.FormatInt(s.throttle, 10))
	o := s.opts
	sb.WriteString("/" + strconv.Itoa(o.ReplicaSpread) + "/" + strconv.Itoa(o.LeaderSpread) + "/" +
		strconv.FormatFloat(o.BytesSpread, 'g', -1, 64) + "/" + strconv.Itoa(o.MaxMoves) + "/" + strconv.Itoa(o.MaxLeaderMoves) + "/" + o.DownTimeout.String() + "|")
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if p.Reassigning() {
				sb.WriteString(t.Name + "-" + strconv.Itoa(int(p.Partition)) + ";")
			}
		}
	}
	return sb.String()
}

// nextDownDeadline is the first time after now at which a fenced broker
// will have been down for the timeout: the balancer wakes then to
// evacuate it. Zero when none is due.
func nextDownDeadline(img *metadata.Image, downTimeout time.Duration, now time.Time) time.Time {
	var next time.Time
	if downTimeout <= 0 {
		return next
	}
	for _, b := range img.Brokers() {
		if !b.Fenced || b.FencedAtMs == 0 {
			continue
		}
		at := time.UnixMilli(b.FencedAtMs).Add(downTimeout)
		if at.After(now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// throttleConfigs are the four configs kafka-reassign-partitions.sh
// --throttle sets (Kafka's QuotaConfig names).
const (
	leaderThrottledRate       = "leader.replication.throttled.rate"
	followerThrottledRate     = "follower.replication.throttled.rate"
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// throttleRecords are the config records that make the replication
// throttle match the reassignments in progress in img, as Kafka's
// reassignment tool sets it: on each topic with moves, the leader list
// names every partition's replicas before the move ("partition:broker":
// the sources the new replicas may copy from) and the follower list the
// replicas it adds; every broker of a move (source or target) gets both
// rates. Topics and brokers without a move lose them, as the tool's
// --verify clears them at the end. The cluster default ("" resource) is
// never touched: it is the operator's.
func throttleRecords(img *metadata.Image, rate int64) []metadata.Record {
	var recs []metadata.Record
	involved := map[model.NodeID]bool{}
	for _, t := range img.Topics() {
		var leaders, followers []string
		for _, p := range t.Partitions {
			if !p.Reassigning() {
				continue
			}
			for _, id := range p.OriginalReplicas() {
				leaders = append(leaders, replicaEntry(p.Partition, id))
			}
			for _, id := range p.AddingReplicas {
				followers = append(followers, replicaEntry(p.Partition, id))
			}
			for _, id := range p.Replicas {
				involved[id] = true
			}
		}
		// Sorted as text, as the tool's TreeSet of "partition:broker".
		slices.Sort(leaders)
		slices.Sort(followers)
		current := img.TopicConfig(t.Name)
		next := maps.Clone(current)
		if next == nil {
			next = map[string]string{}
		}
		setOrDelete(next, leaderThrottledReplicas, strings.Join(leaders, ","), len(leaders) > 0)
		setOrDelete(next, followerThrottledReplicas, strings.Join(followers, ","), len(followers) > 0)
		recs = appendConfigRecords(recs, metadata.ResourceTopic, t.Name, current, next)
	}
	rateText := strconv.FormatInt(rate, 10)
	for _, b := range img.Brokers() {
		res := nodeResource(b.NodeID)
		current := img.BrokerConfig(res)
		next := maps.Clone(current)
		if next == nil {
			next = map[string]string{}
		}
		setOrDelete(next, leaderThrottledRate, rateText, involved[b.NodeID])
		setOrDelete(next, followerThrottledRate, rateText, involved[b.NodeID])
		recs = appendConfigRecords(recs, metadata.ResourceBroker, res, current, next)
	}
	return recs
}

func replicaEntry(partition int32, id model.NodeID) string {
	return strconv.Itoa(int(partition)) + ":" + strconv.Itoa(int(id))
}

func setOrDelete(m map[string]string, key, value string, set bool) {
	if set {
		m[key] = value
	} else {
		delete(m, key)
	}
}
