package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/model"
)

// reassignFlags are samsa cluster reassign's flags, kafka-reassign-partitions.sh's.
type reassignFlags struct {
	generate, execute, verify, cancel, list bool
	topicsFile, brokerList, planFile        string
	disableRackAware                        bool
	throttle, logDirsThrottle               int64
	additional, preserveThrottles, wait     bool
	interval                                time.Duration
}

// newClusterReassign is `samsa cluster reassign`, shaped as
// kafka-reassign-partitions.sh: one action flag, the same files, the same
// output, so an operator's runbook and scripts work with either tool.
func newClusterReassign(conn *connection) *cobra.Command {
	var f reassignFlags
	cmd := &cobra.Command{
		Use:   "reassign (--generate | --execute | --verify | --cancel | --list)",
		Short: "Move partitions with kafka-reassign-partitions.sh's plans: generate, execute (with a throttle), verify, cancel, list",
		Long: `Move partitions between brokers with the plans and output of Kafka's
kafka-reassign-partitions.sh, on any Kafka cluster (AlterPartitionReassignments,
KIP-455). A plan is Kafka's JSON: {"version":1,"partitions":[{"topic":"t",
"partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}.

--generate --topics-to-move-json-file F --broker-list 1,2,3
    prints the topics' current assignment and a proposed one over the
    brokers listed, both as plans. The proposal is Samsa's balancer's
    (internal/balance): replicas on brokers outside the list move onto it,
    then replica counts, bytes and preferred leaders are evened over the
    listed brokers, every rack getting a replica before any gets two
    (--disable-rack-aware: racks not considered), moving as little as it
    can; Kafka's tool instead places every partition anew.
--execute --reassignment-json-file F [--throttle B/s] [--additional]
    prints the current assignment (the plan to roll back with), then starts
    the moves. --throttle sets Kafka's replication throttle: the rate on the
    brokers involved, the replicas moving on their topics; run --verify
    until the moves are done to remove it. --wait follows the moves until
    they are done. Refused while other moves are in progress, unless
    --additional.
--verify --reassignment-json-file F
    says of each partition whether its move is in progress, completed, or
    ended elsewhere; once no move is in progress in the cluster it removes
    the throttles (unless --preserve-throttles).
--cancel --reassignment-json-file F
    cancels the plan's moves in progress (back to the replicas before them)
    and removes the throttles (unless --preserve-throttles).
--list
    lists every move in progress.

samsa reassign start|list|cancel is the same mechanism for a few partitions
given on the command line, without a file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClusterReassign(cmd, conn, &f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.generate, "generate", false, "print the current assignment of --topics-to-move-json-file's topics and one over --broker-list")
	fl.BoolVar(&f.execute, "execute", false, "start the moves of --reassignment-json-file")
	fl.BoolVar(&f.verify, "verify", false, "say how the moves of --reassignment-json-file stand; remove the throttles once none is in progress")
	fl.BoolVar(&f.cancel, "cancel", false, "cancel the moves of --reassignment-json-file in progress")
	fl.BoolVar(&f.list, "list", false, "list every move in progress")
	fl.StringVar(&f.topicsFile, "topics-to-move-json-file", "", `--generate: the topics, as {"version":1,"topics":[{"topic":"t"}]}`)
	fl.StringVar(&f.brokerList, "broker-list", "", "--generate: the brokers to place the topics on, as 1,2,3")
	fl.BoolVar(&f.disableRackAware, "disable-rack-aware", false, "--generate: ignore the brokers' racks")
	fl.StringVar(&f.planFile, "reassignment-json-file", "", "the plan, Kafka's reassignment JSON")
	fl.Int64Var(&f.throttle, "throttle", -1, "--execute: replication throttle in bytes per second on the brokers involved (-1: none)")
	fl.Int64Var(&f.logDirsThrottle, "replica-alter-log-dirs-throttle", -1,
		"--execute: throttle of moves between log directories in bytes per second (-1: none; Samsa's plans move none)")
	fl.BoolVar(&f.additional, "additional", false, "--execute: start the plan even while other moves are in progress")
	fl.BoolVar(&f.preserveThrottles, "preserve-throttles", false, "--verify, --cancel: leave the throttles as they are")
	fl.BoolVar(&f.wait, "wait", false, "--execute: follow the moves until they are done")
	fl.DurationVar(&f.interval, "interval", time.Second, "--wait: how often to check")
	return cmd
}

func runClusterReassign(cmd *cobra.Command, conn *connection, f *reassignFlags) error {
	var actions []string
	for name, on := range map[string]bool{"--generate": f.generate, "--execute": f.execute, "--verify": f.verify, "--cancel": f.cancel, "--list": f.list} {
		if on {
			actions = append(actions, name)
		}
	}
	slices.Sort(actions)
	if len(actions) != 1 {
		return errors.New("give exactly one of --generate, --execute, --verify, --cancel and --list")
	}
	if err := checkReassignFlags(cmd, f); err != nil {
		return err
	}
	cl, err := conn.client(cmd)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := conn.adminFor(cl)
	out := cmd.OutOrStdout()
	switch {
	case f.list:
		ctx, cancel := conn.opContext(cmd.Context())
		defer cancel()
		moving, err := listReassignments(ctx, adm, nil)
		if err != nil {
			return conn.reachErr(cmd, err)
		}
		return printKafkaReassignments(out, moving)
	case f.generate:
		return generateReassignment(cmd, conn, adm, f)
	}
	data, err := os.ReadFile(f.planFile)
	if err != nil {
		return err
	}
	plan, order, err := parseReassignmentJSON(data, cmd.ErrOrStderr(), f.planFile)
	if err != nil {
		return err
	}
	switch {
	case f.execute:
		return executeReassignment(cmd, conn, adm, f, plan, order)
	case f.verify:
		return verifyReassignment(cmd, conn, adm, f, plan)
	default:
		return cancelReassignment(cmd, conn, adm, f, plan)
	}
}

// checkReassignFlags refuses a flag that means nothing for the action, as
// Kafka's tool does, rather than ignoring it.
func checkReassignFlags(cmd *cobra.Command, f *reassignFlags) error {
	allowed := map[string][]string{}
	switch {
	case f.generate:
		allowed["generate"] = []string{"topics-to-move-json-file", "broker-list", "disable-rack-aware"}
		if f.topicsFile == "" || f.brokerList == "" {
			return errors.New("--generate needs --topics-to-move-json-file and --broker-list")
		}
	case f.execute:
		allowed["execute"] = []string{"reassignment-json-file", "throttle", "replica-alter-log-dirs-throttle", "additional", "wait", "interval"}
	case f.verify:
		allowed["verify"] = []string{"reassignment-json-file", "preserve-throttles"}
	case f.cancel:
		allowed["cancel"] = []string{"reassignment-json-file", "preserve-throttles"}
	case f.list:
		allowed["list"] = nil
	}
	var action string
	var ok []string
	for a, names := range allowed {
		action, ok = a, names
	}
	if !f.generate && !f.list && f.planFile == "" {
		return fmt.Errorf("--%s needs --reassignment-json-file", action)
	}
	var bad []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if cmd.LocalFlags().Lookup(fl.Name) != nil && !slices.Contains([]string{"generate", "execute", "verify", "cancel", "list"}, fl.Name) && !slices.Contains(ok, fl.Name) {
			bad = append(bad, "--"+fl.Name)
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("%s cannot be used with --%s", strings.Join(bad, ", "), action)
	}
	return nil
}

// printKafkaReassignments is --list, Kafka's curReassignmentsToString.
func printKafkaReassignments(out io.Writer, moving []kadm.ListPartitionReassignmentsResponse) error {
	if len(moving) == 0 {
		_, err := fmt.Fprintln(out, "No partition reassignments found.")
		return err
	}
	fmt.Fprintln(out, "Current partition reassignments:")
	for _, m := range moving {
		line := fmt.Sprintf("%s-%d: replicas: %s.", m.Topic, m.Partition, idList(m.Replicas))
		if len(m.AddingReplicas) > 0 {
			line += fmt.Sprintf(" adding: %s.", idList(m.AddingReplicas))
		}
		if len(m.RemovingReplicas) > 0 {
			line += fmt.Sprintf(" removing: %s.", idList(m.RemovingReplicas))
		}
		fmt.Fprintln(out, line)
	}
	return nil
}

// generateReassignment is --generate.
func generateReassignment(cmd *cobra.Command, conn *connection, adm *kadm.Client, f *reassignFlags) error {
	data, err := os.ReadFile(f.topicsFile)
	if err != nil {
		return err
	}
	topics, err := parseTopicsToMove(data, cmd.ErrOrStderr(), f.topicsFile)
	if err != nil {
		return err
	}
	brokers, err := parseBrokerList(f.brokerList)
	if err != nil {
		return err
	}
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	st, err := readClusterState(ctx, adm, nil)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	moving, err := listReassignments(ctx, adm, topics)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	current, proposed, notes, err := proposeAssignment(st, topics, brokers, moving, !f.disableRackAware)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: "+n)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Current partition replica assignment\n%s\n\n", formatReassignmentJSON(current))
	_, err = fmt.Fprintf(out, "Proposed partition reassignment configuration\n%s\n", formatReassignmentJSON(proposed))
	return err
}

// proposeAssignment is --generate's planning: the balancer over the
// topics' partitions alone, with the brokers outside the list draining and
// no budget, so every replica outside it moves (unless min ISR holds it for
// now: the notes say so). A partition moving now keeps its target. It
// returns the topics' current assignment (during a move, the union of old
// and new replicas, as Kafka's tool shows it) and the proposed one.
func proposeAssignment(st balance.ClusterState, topics []string, brokers []int32, moving []kadm.ListPartitionReassignmentsResponse,
	rackAware bool) (assignment, assignment, []string, error) {
	listed := map[model.NodeID]bool{}
	for _, id := range brokers {
		listed[model.NodeID(id)] = true
	}
	known := map[model.NodeID]bool{}
	for i := range st.Brokers {
		b := &st.Brokers[i]
		if b.Alive {
			known[b.ID] = true
		}
		b.Draining = !listed[b.ID]
		if !rackAware {
			b.Rack = ""
		}
	}
	for _, id := range brokers {
		if !known[model.NodeID(id)] {
			return nil, nil, nil, fmt.Errorf("--broker-list: broker %d is not a live broker of the cluster", id)
		}
	}
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var parts []balance.Partition
	have := map[string]bool{}
	for _, p := range st.Partitions {
		if want[p.Topic] {
			parts = append(parts, p)
			have[p.Topic] = true
		}
	}
	for _, t := range topics {
		if !have[t] {
			return nil, nil, nil, fmt.Errorf("topic %s not found", t)
		}
	}
	st.Partitions = parts
	current, proposed := assignment{}, assignment{}
	opts := balance.DefaultOptions()
	opts.MaxMoves, opts.MaxLeaderMoves = len(parts)+1, len(parts)+1
	opts.CountAddedReplicas = true
	var notes []string
	movingTo := map[model.TopicPartition][]int32{}
	for _, m := range moving {
		tp := model.TopicPartition{Topic: m.Topic, Partition: m.Partition}
		var target []int32
		for _, r := range m.Replicas {
			if !slices.Contains(m.RemovingReplicas, r) {
				target = append(target, r)
			}
		}
		movingTo[tp] = target
		opts.InProgress = append(opts.InProgress, tp)
		notes = append(notes, fmt.Sprintf("%s is moving now (to %s): proposed as its move's target", tp, idList(target)))
	}
	for _, p := range parts {
		tp := model.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		current[tp] = toInt32s(p.Replicas)
		proposed[tp] = current[tp]
		if to, ok := movingTo[tp]; ok {
			proposed[tp] = to
		}
	}
	plan := balance.Propose(st, opts)
	for _, m := range plan.Moves {
		proposed[model.TopicPartition{Topic: m.Topic, Partition: m.Partition}] = toInt32s(m.To)
	}
	for tp, replicas := range proposed {
		for _, r := range replicas {
			if !listed[model.NodeID(r)] {
				notes = append(notes, fmt.Sprintf("%s keeps a replica on broker %d, outside --broker-list, for now", tp, r))
			}
		}
	}
	notes = append(notes, plan.Notes...)
	slices.Sort(notes)
	return current, proposed, slices.Compact(notes), nil
}

func toInt32s(ids []model.NodeID) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

// executeReassignment is --execute.
func executeReassignment(cmd *cobra.Command, conn *connection, adm *kadm.Client, f *reassignFlags, plan assignment, order []model.TopicPartition) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	out := cmd.OutOrStdout()
	inProgress, err := listReassignments(ctx, adm, nil)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	if !f.additional && len(inProgress) > 0 {
		return errors.New("cannot execute because there is an existing partition reassignment; use --additional to start this one besides it " +
			"(or to change the throttle by starting the current one again)")
	}
	cl, err := conn.client(cmd)
	if err != nil {
		return err
	}
	defer cl.Close()
	registered, fenced, err := registeredBrokers(ctx, cl)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	brokers := map[int32]bool{}
	for _, r := range plan {
		for _, b := range r {
			brokers[b] = true
		}
	}
	for _, b := range slices.Sorted(maps.Keys(brokers)) {
		switch {
		case !registered[b]:
			return fmt.Errorf("unknown broker id %d", b)
		case fenced[b]:
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: broker %d is fenced (stopped or catching up): its new replicas copy once it is back\n", b)
		}
	}
	current, err := currentAssignment(ctx, adm, order)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	fmt.Fprintf(out, "Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback\n",
		formatReassignmentJSON(current))
	if f.throttle >= 0 || f.logDirsThrottle >= 0 {
		fmt.Fprintln(out, "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.")
	}
	if f.throttle >= 0 {
		if err := setThrottles(ctx, adm, out, proposedMoves(inProgress, plan, current), f.throttle); err != nil {
			return err
		}
	}
	if f.logDirsThrottle >= 0 {
		// Kafka's tool sets it on the brokers whose replicas move between
		// log directories; a Samsa plan has none (log_dirs "any").
		fmt.Fprintln(cmd.ErrOrStderr(), "note: the plan moves no replica between log directories: --replica-alter-log-dirs-throttle is set on no broker")
	}
	var req kadm.AlterPartitionAssignmentsReq
	var targets []reassignTarget
	for _, tp := range order {
		req.Assign(tp.Topic, tp.Partition, plan[tp])
		targets = append(targets, reassignTarget{topic: tp.Topic, partition: tp.Partition})
	}
	if err := alterReassignments(cmd, conn, adm, req, false); err != nil {
		return fmt.Errorf("error reassigning partition(s):\n%w", err)
	}
	names := make([]string, len(order))
	for i, tp := range plan.sortedPartitions() {
		names[i] = tp.String()
	}
	s := "s"
	if len(names) == 1 {
		s = ""
	}
	fmt.Fprintf(out, "Successfully started partition reassignment%s for %s\n", s, strings.Join(names, ","))
	if !f.wait {
		return nil
	}
	return waitReassignments(cmd, conn, adm, targets, f.interval)
}

// registeredBrokers are the brokers DescribeCluster lists, fenced ones
// included where the cluster can say (v2), and which of those are fenced.
func registeredBrokers(ctx context.Context, cl *kgo.Client) (map[int32]bool, map[int32]bool, error) {
	dc, err := describeClusterWithFenced(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	registered, fenced := map[int32]bool{}, map[int32]bool{}
	for _, b := range dc.Brokers {
		registered[b.NodeID] = true
		fenced[b.NodeID] = b.IsFenced
	}
	return registered, fenced, nil
}

// partitionState is one partition's --verify line.
type partitionState struct {
	tp               model.TopicPartition
	current, target  []int32
	inProgress, done bool
}

// verifyStates is Kafka's findPartitionReassignmentStates: each planned
// partition in progress, completed (its replicas are the target) or
// ended otherwise, and whether any move is in progress in the cluster.
func verifyStates(ctx context.Context, adm *kadm.Client, plan assignment) ([]partitionState, bool, error) {
	all, err := listReassignments(ctx, adm, nil)
	if err != nil {
		return nil, false, err
	}
	moving := map[model.TopicPartition]bool{}
	for _, m := range all {
		moving[model.TopicPartition{Topic: m.Topic, Partition: m.Partition}] = true
	}
	tps := plan.sortedPartitions()
	current, err := currentAssignment(ctx, adm, tps)
	if err != nil {
		return nil, false, err
	}
	var out []partitionState
	for _, tp := range tps {
		st := partitionState{tp: tp, current: current[tp], target: plan[tp], inProgress: moving[tp]}
		st.done = !st.inProgress && slices.Equal(st.current, st.target)
		out = append(out, st)
	}
	return out, len(all) > 0, nil
}

// verifyReassignment is --verify.
func verifyReassignment(cmd *cobra.Command, conn *connection, adm *kadm.Client, f *reassignFlags, plan assignment) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	states, ongoing, err := verifyStates(ctx, adm, plan)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "Status of partition reassignment:")
	for _, st := range states {
		switch {
		case st.inProgress:
			fmt.Fprintf(out, "Reassignment of partition %s is still in progress.\n", st.tp)
		case st.done:
			fmt.Fprintf(out, "Reassignment of partition %s is completed.\n", st.tp)
		default:
			fmt.Fprintf(out, "There is no active reassignment of partition %s, but replica set is %s rather than %s.\n",
				st.tp, idList(st.current), idList(st.target))
		}
	}
	if ongoing || f.preserveThrottles {
		return nil
	}
	// Every broker, as Kafka's tool: the sources of earlier moves are not
	// known any more.
	return clearPlanThrottles(cmd, conn, adm, plan)
}

// clearPlanThrottles clears the throttles on every live broker and the
// plan's brokers and topics.
func clearPlanThrottles(cmd *cobra.Command, conn *connection, adm *kadm.Client, plan assignment) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	var brokers []int32
	for _, b := range md.Brokers {
		brokers = append(brokers, b.NodeID)
	}
	var topics []string
	for tp, replicas := range plan {
		brokers = append(brokers, replicas...)
		topics = append(topics, tp.Topic)
	}
	return clearThrottles(ctx, adm, cmd.OutOrStdout(), brokers, topics)
}

// cancelReassignment is --cancel.
func cancelReassignment(cmd *cobra.Command, conn *connection, adm *kadm.Client, f *reassignFlags, plan assignment) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	set := kadm.TopicsSet{}
	for tp := range plan {
		set.Add(tp.Topic, tp.Partition)
	}
	res, err := adm.ListPartitionReassignments(ctx, set)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	var req kadm.AlterPartitionAssignmentsReq
	var names []string
	for _, m := range res.Sorted() {
		req.CancelAssign(m.Topic, m.Partition)
		names = append(names, fmt.Sprintf("%s-%d", m.Topic, m.Partition))
	}
	out := cmd.OutOrStdout()
	if len(names) == 0 {
		fmt.Fprintln(out, "None of the specified partition reassignments are active.")
	} else {
		if err := alterReassignments(cmd, conn, adm, req, false); err != nil {
			return fmt.Errorf("error cancelling partition reassignment(s):\n%w", err)
		}
		s := "s"
		if len(names) == 1 {
			s = ""
		}
		fmt.Fprintf(out, "Successfully cancelled partition reassignment%s for: %s\n", s, strings.Join(names, ","))
	}
	if f.preserveThrottles {
		return nil
	}
	return clearPlanThrottles(cmd, conn, adm, plan)
}
