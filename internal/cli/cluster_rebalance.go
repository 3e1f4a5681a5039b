package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/model"
)

// newClusterRebalance is `samsa cluster rebalance --dry-run`: the
// balancer's plan for the cluster as it is now, read with the admin API
// alone, so it works against any Kafka cluster.
func newClusterRebalance(conn *connection) *cobra.Command {
	var (
		dryRun, asJSON bool
		drain          []int32
		throttle       int64
		opts           = balance.DefaultOptions()
	)
	cmd := &cobra.Command{
		Use:   "rebalance [--dry-run]",
		Short: "Balance replicas, preferred leaders and bytes over the brokers (--dry-run: only show the moves)",
		Long: `Read the cluster (Metadata for replicas, ISR and racks, DescribeLogDirs for
sizes, DescribeConfigs for each topic's min.insync.replicas) and print the
balancer's plan: each broker's replicas, preferred leaders and bytes before
and after, every move with its reason, and what cannot be done and why.
The planner keeps every rack's share of a partition's replicas within one
of the others', never takes an in-sync replica a partition needs for its
min.insync.replicas, and moves at most --max-moves partitions.

--drain BROKER plans a decommission: the broker's replicas move off it.
Brokers that hold replicas but are not in the metadata are down; their
replicas stay (how long they have been down is not known here). Moves
already in progress are left alone and count against --max-moves.

Without --dry-run the plan is carried out: one AlterPartitionReassignments
with every move (KIP-455; a new replica catches up before an old one
leaves, so a move counts its new replicas toward min.insync.replicas),
the moves' progress printed every second until none is left, then a
preferred-leader election of the moved partitions. A plan may leave work
for the next one (--max-moves, or replicas that must catch up first): run
it again until it prints "no moves".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			plan, err := planRebalance(ctx, adm, drain, opts)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), rebalanceJSON(plan)); err != nil {
					return err
				}
			} else {
				fmt.Fprint(cmd.OutOrStdout(), balance.Summary(plan))
			}
			if dryRun || len(plan.Moves) == 0 {
				return nil
			}
			return carryOut(cmd, conn, adm, plan, throttle)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "print the plan without carrying it out")
	f.BoolVar(&asJSON, "json", false, "print the plan as JSON")
	f.Int32SliceVar(&drain, "drain", nil, "plan to move every replica off this broker (repeatable)")
	f.IntVar(&opts.ReplicaSpread, "replica-spread", opts.ReplicaSpread, "most two brokers' replica counts may differ")
	f.IntVar(&opts.LeaderSpread, "leader-spread", opts.LeaderSpread, "most two brokers' preferred-leader counts may differ")
	f.Float64Var(&opts.BytesSpread, "bytes-spread", opts.BytesSpread, "most two brokers' bytes may differ, as a fraction of the mean (0: bytes not balanced)")
	f.IntVar(&opts.MaxMoves, "max-moves", opts.MaxMoves, "most partitions the plan moves")
	f.IntVar(&opts.MaxLeaderMoves, "max-leader-moves", opts.MaxLeaderMoves, "most preferred-leader changes the plan makes")
	f.Int64Var(&throttle, "throttle", -1, throttleUsage)
	return cmd
}

// throttleUsage is the --throttle flag's text of the commands that move
// replicas.
const throttleUsage = "replication throttle in bytes per second on the brokers the moves involve while they run, " +
	"as kafka-reassign-partitions.sh --throttle sets it; removed when they are done (-1: none)"

// planRebalance reads the cluster and plans: brokers in drain are
// decommissioned, moves in progress are left alone.
func planRebalance(ctx context.Context, adm *kadm.Client, drain []int32, opts balance.Options) (balance.Plan, error) {
	st, err := readClusterState(ctx, adm, drain)
	if err != nil {
		return balance.Plan{}, err
	}
	if opts.InProgress, err = reassigningNow(ctx, adm); err != nil {
		return balance.Plan{}, err
	}
	// Kafka's reassignment, and Samsa's, removes a replica only once
	// every new one is in sync.
	opts.CountAddedReplicas = true
	return balance.Propose(st, opts), nil
}

// reassigningNow lists the partitions moving now.
func reassigningNow(ctx context.Context, adm *kadm.Client) ([]model.TopicPartition, error) {
	moving, err := listReassignments(ctx, adm, nil)
	if err != nil {
		return nil, err
	}
	var out []model.TopicPartition
	for _, m := range moving {
		out = append(out, model.TopicPartition{Topic: m.Topic, Partition: m.Partition})
	}
	return out, nil
}

// carryOut starts every move of the plan (under a replication throttle
// when throttle >= 0, removed once they are done), follows them until
// they are done, then moves leadership to each moved partition's preferred
// replica.
func carryOut(cmd *cobra.Command, conn *connection, adm *kadm.Client, plan balance.Plan, throttle int64) error {
	req := kadm.AlterPartitionAssignmentsReq{}
	var targets []reassignTarget
	elect := kadm.TopicsSet{}
	proposed := assignment{}
	for _, m := range plan.Moves {
		to := toInt32s(m.To)
		req.Assign(m.Topic, m.Partition, to)
		targets = append(targets, reassignTarget{topic: m.Topic, partition: m.Partition})
		elect.Add(m.Topic, m.Partition)
		proposed[model.TopicPartition{Topic: m.Topic, Partition: m.Partition}] = to
	}
	if throttle >= 0 {
		ctx, cancel := conn.opContext(cmd.Context())
		current, err := currentAssignment(ctx, adm, proposed.sortedPartitions())
		if err == nil {
			err = setThrottles(ctx, adm, cmd.OutOrStdout(), proposedMoves(nil, proposed, current), throttle)
		}
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
	}
	if err := alterReassignments(cmd, conn, adm, req, true); err != nil {
		return err
	}
	if err := waitReassignments(cmd, conn, adm, targets, time.Second); err != nil {
		return err
	}
	if err := awaitMetadata(cmd, conn, adm, proposed); err != nil {
		return err
	}
	if throttle >= 0 {
		if err := clearPlanThrottles(cmd, conn, adm, proposed); err != nil {
			return err
		}
	}
	return electPreferred(cmd, conn, adm, elect)
}

// awaitMetadata waits until Metadata shows every partition of want with
// its target replicas on three reads in a row (each from any broker): a
// broker's image follows the controller's by some milliseconds, and the
// next plan must not be made from a partition still listed with the
// union of its old and new replicas.
func awaitMetadata(cmd *cobra.Command, conn *connection, adm *kadm.Client, want assignment) error {
	topics := map[string]bool{}
	for tp := range want {
		topics[tp.Topic] = true
	}
	names := slices.Sorted(maps.Keys(topics))
	agreed := 0
	for range 100 {
		ctx, cancel := conn.opContext(cmd.Context())
		md, err := adm.Metadata(ctx, names...)
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		same := true
		for tp, replicas := range want {
			if p, ok := md.Topics[tp.Topic].Partitions[tp.Partition]; !ok || !slices.Equal(p.Replicas, replicas) {
				same = false
			}
		}
		if agreed = agreed + 1; !same {
			agreed = 0
		}
		if agreed == 3 {
			return nil
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil // the moves are done; a stale broker only delays the next plan
}

// electPreferred elects the preferred replica of every partition in elect
// (ELECTION_NOT_NEEDED where it leads already).
func electPreferred(cmd *cobra.Command, conn *connection, adm *kadm.Client, elect kadm.TopicsSet) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, elect)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	var failed []string
	for _, ps := range res {
		for _, r := range ps {
			// ELECTION_NOT_NEEDED: the preferred replica leads already.
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				failed = append(failed, fmt.Sprintf("%s:%d: %v", r.Topic, r.Partition, r.Err))
			}
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return fmt.Errorf("moved, but the preferred leaders were not elected:\n%s", strings.Join(failed, "\n"))
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), "preferred leaders elected")
	return err
}

// readClusterState builds the planner's input from the admin API.
func readClusterState(ctx context.Context, adm *kadm.Client, drain []int32) (balance.ClusterState, error) {
	st := balance.ClusterState{Now: time.Now()}
	md, err := adm.Metadata(ctx)
	if err != nil {
		return st, err
	}
	draining := map[int32]bool{}
	for _, id := range drain {
		draining[id] = true
	}
	known := map[int32]bool{}
	for _, b := range md.Brokers {
		known[b.NodeID] = true
		rack := ""
		if b.Rack != nil {
			rack = *b.Rack
		}
		st.Brokers = append(st.Brokers, balance.Broker{ID: model.NodeID(b.NodeID), Rack: rack, Alive: true, Draining: draining[b.NodeID]})
	}
	sizes, err := leaderSizes(ctx, adm, md)
	if err != nil {
		return st, err
	}
	minISR, err := topicMinISR(ctx, adm, md.Topics.Names())
	if err != nil {
		return st, err
	}
	down := map[int32]bool{}
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			continue
		}
		for _, p := range t.Partitions.Sorted() {
			part := balance.Partition{Leader: model.NodeID(p.Leader), MinISR: minISR[t.Topic],
				Bytes: sizes[model.TopicPartition{Topic: t.Topic, Partition: p.Partition}]}
			part.Topic, part.Partition = t.Topic, p.Partition
			for _, r := range p.Replicas {
				part.Replicas = append(part.Replicas, model.NodeID(r))
				if !known[r] && !down[r] {
					down[r] = true
					st.Brokers = append(st.Brokers, balance.Broker{ID: model.NodeID(r)})
				}
			}
			for _, r := range p.ISR {
				part.ISR = append(part.ISR, model.NodeID(r))
			}
			// A live broker's offline replica is on a failed log
			// directory (KIP-858). Since when is not in the metadata: the
			// plan leaves it be (a move that kept it would never finish)
			// and says so; the controller's balancer moves it once past
			// its down timeout.
			for _, r := range p.OfflineReplicas {
				if known[r] {
					part.Offline = append(part.Offline, balance.OfflineReplica{Broker: model.NodeID(r)})
				}
			}
			st.Partitions = append(st.Partitions, part)
		}
	}
	// A broker to drain that is down (stopped, fenced) but still holds
	// replicas drains too: its replicas are copied from the others.
	for _, id := range drain {
		if !known[id] && !down[id] {
			return st, fmt.Errorf("--drain %d: no such broker in the cluster's metadata, and no replica on it", id)
		}
	}
	for i := range st.Brokers {
		st.Brokers[i].Draining = draining[int32(st.Brokers[i].ID)]
	}
	slices.SortFunc(st.Brokers, func(a, b balance.Broker) int { return int(a.ID - b.ID) })
	return st, nil
}

// leaderSizes is each partition's size on its leader, from DescribeLogDirs
// of every broker; a broker that does not answer leaves its partitions at
// 0 bytes.
func leaderSizes(ctx context.Context, adm *kadm.Client, md kadm.Metadata) (map[model.TopicPartition]int64, error) {
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		return nil, err
	}
	sizes := map[model.TopicPartition]int64{}
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			var size int64
			dirs[p.Leader].EachPartition(func(d kadm.DescribedLogDirPartition) {
				if d.Topic == t.Topic && d.Partition == p.Partition {
					size = d.Size
				}
			})
			sizes[model.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = size
		}
	}
	return sizes, nil
}

// topicMinISR is each topic's min.insync.replicas (1 where it cannot be
// read).
func topicMinISR(ctx context.Context, adm *kadm.Client, topics []string) (map[string]int, error) {
	out := map[string]int{}
	if len(topics) == 0 {
		return out, nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		out[rc.Name] = 1
		for _, c := range rc.Configs {
			if c.Key == "min.insync.replicas" && c.Value != nil {
				if n, err := strconv.Atoi(*c.Value); err == nil {
					out[rc.Name] = n
				}
			}
		}
	}
	return out, nil
}

// rebalancePlan is the JSON form of a plan.
type rebalancePlan struct {
	Moves  []rebalanceMove      `json:"moves"`
	Notes  []string             `json:"notes"`
	Before []balance.BrokerLoad `json:"before"`
	After  []balance.BrokerLoad `json:"after"`
}

type rebalanceMove struct {
	Topic     string         `json:"topic"`
	Partition int32          `json:"partition"`
	Kind      string         `json:"kind"`
	From      []model.NodeID `json:"from"`
	To        []model.NodeID `json:"to"`
	Reason    string         `json:"reason"`
}

func rebalanceJSON(p balance.Plan) rebalancePlan {
	out := rebalancePlan{Moves: []rebalanceMove{}, Notes: p.Notes, Before: p.Before, After: p.After}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for _, m := range p.Moves {
		out.Moves = append(out.Moves, rebalanceMove{Topic: m.Topic, Partition: m.Partition, Kind: m.Kind.String(),
			From: m.From, To: m.To, Reason: m.Reason})
	}
	return out
}
