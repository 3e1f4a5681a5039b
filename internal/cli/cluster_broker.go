package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/model"
)

// Adding and removing brokers online (issue 15). A broker that starts
// registers with the controller and is given nothing until asked:
// add-broker waits for it and, with --rebalance, moves replicas onto it.
// decommission drains every replica off a broker, waits for its process to
// stop, then unregisters it (UnregisterBroker).

// brokerPoll is how often the commands look at a broker's registration.
const brokerPoll = 500 * time.Millisecond

// maxRounds bounds the plans a drain or a rebalance carries out: each
// waits for its moves, and a plan leaves work for the next one only when
// its budget or min ISR holds it back.
const maxRounds = 50

func parseBrokerID(arg string) (int32, error) {
	id, err := strconv.ParseInt(arg, 10, 32)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("%q is not a broker ID", arg)
	}
	return int32(id), nil
}

// brokerState is a broker's registration: "live", "fenced" or
// "unregistered".
func brokerState(ctx context.Context, cl *kgo.Client, id int32) (string, error) {
	registered, fenced, err := registeredBrokers(ctx, cl)
	switch {
	case err != nil:
		return "", err
	case !registered[id]:
		return "unregistered", nil
	case fenced[id]:
		return "fenced", nil
	}
	return "live", nil
}

func newClusterAddBroker(conn *connection) *cobra.Command {
	var (
		rebalance, wait bool
		throttle        int64
		opts            = balance.DefaultOptions()
	)
	cmd := &cobra.Command{
		Use:   "add-broker ID [--wait] [--rebalance]",
		Short: "Check that a new broker has joined (registered and unfenced) and, with --rebalance, move replicas onto it",
		Long: `A broker joins a cluster by starting with its node.id, the cluster's
controller.quorum.bootstrap.servers (or voters) and storage formatted with the
cluster's ID: it registers with the active controller, fenced, and is unfenced
once it has caught up with the metadata. Nothing is placed on it until asked:
new topics and partitions may use it, existing ones stay where they are.

add-broker reports the broker once it is registered and unfenced (with --wait
it waits for that, for as long as the command runs; without, it fails at once
if the broker has not joined). With --rebalance it then runs the balancer
(samsa cluster rebalance) until its plan has no moves, each plan's moves
followed until done: replicas move from the fullest brokers onto the new one
until the counts, bytes and preferred leaders are within their spreads.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseBrokerID(args[0])
			if err != nil {
				return err
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			adm := conn.adminFor(cl)
			if err := awaitLiveBroker(cmd, conn, cl, id, wait); err != nil {
				return err
			}
			if err := reportBroker(cmd, conn, adm, id); err != nil {
				return err
			}
			if !rebalance {
				return nil
			}
			if err := rebalanceUntilDone(cmd, conn, adm, opts, throttle); err != nil {
				return err
			}
			return reportBroker(cmd, conn, adm, id)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&wait, "wait", false, "wait until the broker has registered and been unfenced")
	f.BoolVar(&rebalance, "rebalance", false, "then move replicas onto it with the balancer until its plan has no moves")
	f.Int64Var(&throttle, "throttle", -1, throttleUsage)
	f.IntVar(&opts.MaxMoves, "max-moves", opts.MaxMoves, "most partitions each plan moves")
	return cmd
}

// awaitLiveBroker returns once broker id is registered and unfenced; without
// wait it fails at once when it is not.
func awaitLiveBroker(cmd *cobra.Command, conn *connection, cl *kgo.Client, id int32, wait bool) error {
	out := cmd.OutOrStdout()
	last := ""
	for {
		ctx, cancel := conn.opContext(cmd.Context())
		state, err := brokerState(ctx, cl, id)
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		if state == "live" {
			return nil
		}
		if !wait {
			if state == "fenced" {
				return fmt.Errorf("broker %d is registered but fenced (catching up with the metadata, or stopped); --wait waits for it", id)
			}
			return fmt.Errorf("broker %d is not registered: start it with node.id=%d and this cluster's quorum settings; --wait waits for it", id, id)
		}
		if state != last {
			switch state {
			case "fenced":
				fmt.Fprintf(out, "broker %d registered, fenced: waiting for it to catch up with the metadata\n", id)
			default:
				fmt.Fprintf(out, "waiting for broker %d to register\n", id)
			}
			last = state
		}
		select {
		case <-cmd.Context().Done():
			return fmt.Errorf("broker %d did not join: %w", id, cmd.Context().Err())
		case <-time.After(brokerPoll):
		}
	}
}

// reportBroker prints the broker's endpoint, rack and how many replicas
// and preferred leaderships it holds.
func reportBroker(cmd *cobra.Command, conn *connection, adm *kadm.Client, id int32) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	md, err := adm.Metadata(ctx)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	endpoint, rack := "-", "-"
	for _, b := range md.Brokers {
		if b.NodeID == id {
			endpoint = b.Host + ":" + strconv.Itoa(int(b.Port))
			rack = dashIfEmpty(derefString(b.Rack))
		}
	}
	replicas, preferred := 0, 0
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			if slices.Contains(p.Replicas, id) {
				replicas++
			}
			if len(p.Replicas) > 0 && p.Replicas[0] == id {
				preferred++
			}
		}
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "broker %d is live: endpoint %s, rack %s, %d replica(s), preferred leader of %d\n",
		id, endpoint, rack, replicas, preferred)
	return err
}

// rebalanceUntilDone plans and carries out until a plan has no moves.
func rebalanceUntilDone(cmd *cobra.Command, conn *connection, adm *kadm.Client, opts balance.Options, throttle int64) error {
	out := cmd.OutOrStdout()
	var last []balance.Move
	for round := 1; round <= maxRounds; round++ {
		ctx, cancel := conn.opContext(cmd.Context())
		plan, err := planRebalance(ctx, adm, nil, opts)
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		fmt.Fprintf(out, "plan %d:\n%s", round, balance.Summary(plan))
		if len(plan.Moves) == 0 {
			return nil
		}
		if slices.EqualFunc(plan.Moves, last, sameMove) {
			// Carried out, the same plan again: the cluster did not move
			// as planned (a move refused, a leader not elected).
			return errors.New("the balancer proposes the moves it just made again; stopping (samsa cluster rebalance --dry-run shows the plan)")
		}
		last = plan.Moves
		if err := carryOut(cmd, conn, adm, plan, throttle); err != nil {
			return err
		}
	}
	return fmt.Errorf("the balancer still moves replicas after %d plans; run samsa cluster rebalance to go on", maxRounds)
}

func sameMove(a, b balance.Move) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.Kind == b.Kind && slices.Equal(a.To, b.To)
}

func newClusterDecommission(conn *connection) *cobra.Command {
	var (
		dryRun, unregisterNow bool
		throttle              int64
		opts                  = balance.DefaultOptions()
	)
	cmd := &cobra.Command{
		Use:   "decommission ID [--dry-run] [--throttle B/s] [--unregister-now]",
		Short: "Drain every replica off a broker, wait for it to stop, then unregister it",
		Long: `Take a broker out of the cluster for good:

1. Plan the drain with the balancer (the broker is draining): each replica on
   it moves to another broker, every rack keeping a replica before any gets
   two, and no move takes an in-sync replica a partition needs for its
   min.insync.replicas (the new replicas are in sync before old ones go).
   A drain that cannot be done is refused before anything moves: a partition
   with more replicas than the other live brokers, or a plan that cannot
   take the last replicas off (the balancer's notes say why).
2. Carry it out, --max-moves partitions at a time, under --throttle if
   given, showing the partitions and bytes left (a progress bar on a
   terminal, a line a second otherwise), until no replica is left on it,
   then elect the moved partitions' preferred leaders.
3. Wait until the broker is fenced: stop its process now (a SIGTERM's
   controlled shutdown fences it at once). Ctrl-C leaves it drained and
   registered; run the command again to unregister it. With
   --unregister-now the broker must be fenced already.
4. Send UnregisterBroker: the controller forgets it.

--dry-run prints the check and the whole plan and changes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseBrokerID(args[0])
			if err != nil {
				return err
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			adm := conn.adminFor(cl)
			return decommission(cmd, conn, cl, adm, id, opts, throttle, dryRun, unregisterNow)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "print the check and the plan; move nothing")
	f.Int64Var(&throttle, "throttle", -1, throttleUsage)
	f.BoolVar(&unregisterNow, "unregister-now", false, "unregister at once once drained; the broker must be fenced (stopped) already")
	f.IntVar(&opts.MaxMoves, "max-moves", opts.MaxMoves, "most partitions moving at once")
	return cmd
}

// replicasOn counts the partitions with a replica on id.
func replicasOn(st balance.ClusterState, id int32) int {
	n := 0
	for _, p := range st.Partitions {
		if slices.Contains(p.Replicas, model.NodeID(id)) {
			n++
		}
	}
	return n
}

// drainCheck refuses a drain that cannot be done: a partition on the
// broker with more replicas than the brokers left can hold. The broker
// leaves its rack too; the planner keeps every partition within the rack
// spread of the racks left.
func drainCheck(st balance.ClusterState, id int32) error {
	eligible := 0
	for _, b := range st.Brokers {
		if b.Alive && !b.Draining {
			eligible++
		}
	}
	var over []string
	for _, p := range st.Partitions {
		if slices.Contains(p.Replicas, model.NodeID(id)) && len(p.Replicas) > eligible {
			over = append(over, fmt.Sprintf("%s-%d (replication factor %d)", p.Topic, p.Partition, len(p.Replicas)))
		}
	}
	if len(over) == 0 {
		return nil
	}
	more := ""
	if len(over) > 5 {
		more = fmt.Sprintf(" and %d more", len(over)-5)
		over = over[:5]
	}
	return fmt.Errorf("cannot drain broker %d: %s%s would have more replicas than the %d other live broker(s); "+
		"add a broker or lower the replication factor first", id, strings.Join(over, ", "), more, eligible)
}

// onlyOff keeps the replica moves that take a replica off id: a drain moves
// nothing else.
func onlyOff(plan balance.Plan, id int32) balance.Plan {
	plan.Moves = slices.DeleteFunc(slices.Clone(plan.Moves), func(m balance.Move) bool {
		return m.Kind != balance.MoveReplicas || !slices.Contains(m.From, model.NodeID(id))
	})
	return plan
}

func decommission(cmd *cobra.Command, conn *connection, cl *kgo.Client, adm *kadm.Client, id int32, opts balance.Options,
	throttle int64, dryRun, unregisterNow bool) error {
	out := cmd.OutOrStdout()
	ctx, cancel := conn.opContext(cmd.Context())
	state, err := brokerState(ctx, cl, id)
	var st balance.ClusterState
	if err == nil {
		st, err = readClusterState(ctx, adm, []int32{id})
		if err != nil && state == "unregistered" {
			cancel()
			return fmt.Errorf("broker %d is not registered and holds no replica", id)
		}
	}
	cancel()
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	if err := drainCheck(st, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "broker %d (%s) holds %d replica(s)\n", id, state, replicasOn(st, id))
	if dryRun {
		all := opts
		all.MaxMoves = len(st.Partitions) + 1
		ctx, cancel := conn.opContext(cmd.Context())
		plan, err := planRebalance(ctx, adm, []int32{id}, all)
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		_, err = fmt.Fprint(out, balance.Summary(onlyOff(plan, id)))
		return err
	}
	if err := drain(cmd, conn, adm, id, opts, throttle); err != nil {
		return err
	}
	return unregisterWhenStopped(cmd, conn, cl, id, unregisterNow)
}

// drain carries out plans until no replica is left on id.
func drain(cmd *cobra.Command, conn *connection, adm *kadm.Client, id int32, opts balance.Options, throttle int64) error {
	out := cmd.OutOrStdout()
	for round := 1; round <= maxRounds; round++ {
		ctx, cancel := conn.opContext(cmd.Context())
		st, err := readClusterState(ctx, adm, []int32{id})
		var plan balance.Plan
		var inProgress []model.TopicPartition
		if err == nil {
			plan, err = planRebalance(ctx, adm, []int32{id}, opts)
		}
		if err == nil {
			inProgress, err = reassigningNow(ctx, adm)
		}
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		left := replicasOn(st, id)
		if left == 0 {
			fmt.Fprintf(out, "broker %d holds no replica\n", id)
			return nil
		}
		plan = onlyOff(plan, id)
		if len(plan.Moves) == 0 {
			if len(inProgress) > 0 {
				// Moves started elsewhere hold partitions the plan may not
				// touch: wait for them, then plan again.
				fmt.Fprintf(out, "waiting for %d move(s) in progress before planning again\n", len(inProgress))
				var targets []reassignTarget
				for _, tp := range inProgress {
					targets = append(targets, reassignTarget{topic: tp.Topic, partition: tp.Partition})
				}
				if err := waitReassignments(cmd, conn, adm, targets, time.Second); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("cannot drain broker %d further: %d replica(s) stay on it: %s", id, left, strings.Join(plan.Notes, "; "))
		}
		fmt.Fprintf(out, "round %d: moving %d partition(s) off broker %d, %d replica(s) on it\n", round, len(plan.Moves), id, left)
		if err := carryOut(cmd, conn, adm, plan, throttle); err != nil {
			return err
		}
	}
	return fmt.Errorf("broker %d still holds replicas after %d rounds; run the command again to go on", id, maxRounds)
}

// unregisterWhenStopped waits until id is fenced (its process stopped),
// then sends UnregisterBroker.
func unregisterWhenStopped(cmd *cobra.Command, conn *connection, cl *kgo.Client, id int32, now bool) error {
	out := cmd.OutOrStdout()
	told := false
	for {
		ctx, cancel := conn.opContext(cmd.Context())
		state, err := brokerState(ctx, cl, id)
		cancel()
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		switch state {
		case "unregistered":
			_, err := fmt.Fprintf(out, "broker %d is not registered any more\n", id)
			return err
		case "fenced":
			return unregisterBroker(cmd, conn, cl, id)
		}
		if now {
			return fmt.Errorf("broker %d is drained but still live: stop its process, then run this again (or without --unregister-now, which waits)", id)
		}
		if !told {
			fmt.Fprintf(out, "broker %d is drained: stop its process now; waiting for it to be fenced, then it is unregistered (Ctrl-C leaves it drained and registered)\n", id)
			told = true
		}
		select {
		case <-cmd.Context().Done():
			return fmt.Errorf("broker %d is drained but was not stopped: %w", id, cmd.Context().Err())
		case <-time.After(brokerPoll):
		}
	}
}

// unregisterBroker sends UnregisterBroker (Kafka 3.x+).
func unregisterBroker(cmd *cobra.Command, conn *connection, cl *kgo.Client, id int32) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		// kgo's answer when the cluster does not advertise the API.
		if strings.Contains(err.Error(), "broker is too old") {
			return fmt.Errorf("broker %d is drained and stopped, but the cluster does not support UnregisterBroker: %w", id, err)
		}
		return conn.reachErr(cmd, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("unregister broker %d: %s", id, kafkaReason(err, derefString(resp.ErrorMessage)))
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "broker %d unregistered\n", id)
	return err
}
