package balance

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/samsa-io/samsa/internal/model"
)

// ClusterState is what the planner reads: the registered brokers, every
// partition, and the time, which decides whether a down broker has been
// down long enough to move its replicas.
type ClusterState struct {
	Brokers    []Broker
	Partitions []Partition
	Now        time.Time
}

// Broker is one registered broker as the controller sees it.
type Broker struct {
	ID   model.NodeID
	Rack string // broker.rack; "" is a rack of its own, as in placement
	// Alive is false for a fenced broker. DownSince is when it went down;
	// zero means unknown, and an unknown outage never counts as longer
	// than the timeout (moving data is costly: wait until it is known).
	Alive     bool
	DownSince time.Time
	// Draining is the operator's request to move everything off the
	// broker (decommission): it gets no new replicas and loses its own.
	Draining bool
}

// Partition is one partition's assignment and health.
type Partition struct {
	model.TopicPartition
	Replicas []model.NodeID // in preference order: the first is the preferred leader
	ISR      []model.NodeID
	Leader   model.NodeID
	MinISR   int   // the topic's min.insync.replicas
	Bytes    int64 // the size of one replica (the leader's log)
	// Offline are replicas on a log directory their (live) broker
	// reported failed (KIP-858 JBOD): they serve nothing until the disk
	// is repaired and the broker restarted. Past Options.DownTimeout they
	// move to other brokers, as a long-down broker's replicas do.
	Offline []OfflineReplica
}

// OfflineReplica is a replica on a failed log directory, and since when
// the controller knows it failed; zero means unknown, which never counts
// as past the timeout.
type OfflineReplica struct {
	Broker model.NodeID
	Since  time.Time
}

// Options are the balancer's limits. DefaultOptions gives the defaults;
// each field's comment says what its zero value means.
type Options struct {
	// ReplicaSpread is the most the replica counts of two brokers that can
	// take replicas may differ before replicas move; below 1 counts as 1
	// (counts are whole, so 0 is not always reachable). Default 2.
	ReplicaSpread int
	// LeaderSpread is the same for preferred leaders (partitions whose
	// first replica the broker is). Default 2.
	LeaderSpread int
	// BytesSpread is the most the bytes of two brokers may differ, as a
	// fraction of the mean over the brokers that can take replicas, before
	// replicas move for size; 0 or less turns byte balancing off. Default
	// 0.2.
	BytesSpread float64
	// MaxMoves bounds the reassignments running at once: the plan's
	// replica moves plus InProgress. Below 1 the plan moves no replica.
	// Default 10.
	MaxMoves int
	// MaxLeaderMoves bounds the plan's preferred-leader changes, which move
	// no data (each costs the partition's clients a metadata refresh).
	// Below 1 leaders are not balanced. Default 100.
	MaxLeaderMoves int
	// DownTimeout is how long a broker may be down, or a replica on a
	// failed log directory, before the replicas move to other brokers; 0
	// or less never moves them for being down. Default 30 minutes.
	DownTimeout time.Duration
	// CountAddedReplicas counts a move's added replicas toward
	// min.insync.replicas, for a reassignment mechanism that removes
	// replicas only once every added one has joined the ISR (as Kafka's
	// does). Partitions whose replication factor is at most their min ISR
	// (RF 1, say) can then move in-sync replicas. Default false: only the
	// replicas in sync when planning count.
	CountAddedReplicas bool
	// InProgress are the partitions being reassigned now: the plan does
	// not touch them and they count against MaxMoves. Their replicas count
	// as the state gives them (during a reassignment, old and new).
	InProgress []model.TopicPartition
}

// DefaultOptions returns the options the controller uses unless
// configured otherwise.
func DefaultOptions() Options {
	return Options{
		ReplicaSpread:  2,
		LeaderSpread:   2,
		BytesSpread:    0.2,
		MaxMoves:       10,
		MaxLeaderMoves: 100,
		DownTimeout:    30 * time.Minute,
	}
}

// MoveKind says whether a move copies data.
type MoveKind int

const (
	// MoveReplicas is a reassignment: replicas in To but not in From are
	// added, catch up, then those in From but not in To are removed.
	MoveReplicas MoveKind = iota
	// MoveLeader reorders the replicas so another in-sync replica is
	// preferred, then a preferred-leader election moves leadership: no
	// data moves.
	MoveLeader
)

func (k MoveKind) String() string {
	if k == MoveLeader {
		return "leader"
	}
	return "replicas"
}

// Move is one decision of the plan.
type Move struct {
	Kind MoveKind
	model.TopicPartition
	From, To []model.NodeID // the replica lists before and after
	Leader   model.NodeID   // the preferred leader after the move: To[0]
	Reason   string         // why, for the log and `samsa cluster status`
}

func (m Move) String() string {
	return fmt.Sprintf("%s %s %v -> %v: %s", m.TopicPartition, m.Kind, m.From, m.To, m.Reason)
}

// LogValue logs a move as its fields, for the controller's decision log.
func (m Move) LogValue() slog.Value {
	return slog.GroupValue(slog.String("partition", m.TopicPartition.String()), slog.String("kind", m.Kind.String()),
		slog.Any("from", m.From), slog.Any("to", m.To), slog.String("reason", m.Reason))
}

// Plan is the planner's answer.
type Plan struct {
	Moves []Move
	// Notes say what the planner wanted to do and could not, and why (no
	// broker can take a replica, min ISR, the move budget).
	Notes []string
	// Before and After are every broker's load, in broker order, now and
	// once all moves are done.
	Before, After []BrokerLoad
}

// BrokerLoad is one broker's share of the cluster.
type BrokerLoad struct {
	Broker   model.NodeID
	Rack     string
	State    string // "ok", "draining", "down", "down, evacuating", "unknown"
	Replicas int
	Leaders  int // partitions whose preferred leader it is
	Bytes    int64
}
