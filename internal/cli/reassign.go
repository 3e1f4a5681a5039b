package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newReassignCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "reassign",
		Short: "Move partitions to other brokers on any Kafka cluster, follow and cancel the moves",
		Long: `Move partitions to other brokers while they serve, list the moves in progress
and cancel them, as kafka-reassign-partitions.sh --execute, --verify and
--cancel do, over AlterPartitionReassignments and ListPartitionReassignments
(KIP-455). A partition is TOPIC:PARTITION; a move is TOPIC:PARTITION=ID,ID...
with the new replicas in order, the first the preferred leader.`,
	}
	conn.register(cmd)
	cmd.AddCommand(newReassignStart(&conn), newReassignList(&conn), newReassignCancel(&conn))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// reassignTarget is one TOPIC:PARTITION[=ID,ID...] argument.
type reassignTarget struct {
	topic     string
	partition int32
	replicas  []int32 // nil: none given
}

func parseReassignTarget(arg string, withReplicas bool) (reassignTarget, error) {
	tp, ids, hasIDs := strings.Cut(arg, "=")
	if hasIDs != withReplicas {
		if withReplicas {
			return reassignTarget{}, fmt.Errorf("%q: want TOPIC:PARTITION=ID,ID...", arg)
		}
		return reassignTarget{}, fmt.Errorf("%q: want TOPIC:PARTITION", arg)
	}
	i := strings.LastIndexByte(tp, ':')
	if i <= 0 {
		return reassignTarget{}, fmt.Errorf("%q: want TOPIC:PARTITION", arg)
	}
	p, err := strconv.ParseInt(tp[i+1:], 10, 32)
	if err != nil || p < 0 {
		return reassignTarget{}, fmt.Errorf("%q: partition %q is not a partition number", arg, tp[i+1:])
	}
	t := reassignTarget{topic: tp[:i], partition: int32(p)}
	if !withReplicas {
		return t, nil
	}
	t.replicas = []int32{}
	for _, s := range strings.Split(ids, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || id < 0 {
			return reassignTarget{}, fmt.Errorf("%q: %q is not a broker ID", arg, s)
		}
		t.replicas = append(t.replicas, int32(id))
	}
	return t, nil
}

func parseReassignTargets(args []string, withReplicas bool) ([]reassignTarget, error) {
	out := make([]reassignTarget, 0, len(args))
	for _, a := range args {
		t, err := parseReassignTarget(a, withReplicas)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func newReassignStart(conn *connection) *cobra.Command {
	var forbidRFChange, wait bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "start TOPIC:PARTITION=ID,ID... ...",
		Short: "Start moving partitions to new replicas",
		Long: `Start moving each partition to the replicas given. The new replicas copy the
partition from its leader; once they are all in sync the old ones are
dropped and delete their copies. With --wait the command prints the
partitions still moving every --interval until none is (interrupting it
leaves the moves running: samsa reassign cancel stops them).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			targets, err := parseReassignTargets(args, true)
			if err != nil {
				return err
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			var req kadm.AlterPartitionAssignmentsReq
			for _, t := range targets {
				req.Assign(t.topic, t.partition, t.replicas)
			}
			if err := alterReassignments(cmd, conn, adm, req, forbidRFChange); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "started moving %d partition(s)\n", len(targets))
			if !wait {
				return nil
			}
			return waitReassignments(cmd, conn, adm, targets, interval)
		},
	}
	cmd.Flags().BoolVar(&forbidRFChange, "forbid-rf-change", false,
		"refuse a move that changes a partition's replica count (KIP-860; Kafka 4.1+)")
	cmd.Flags().BoolVar(&wait, "wait", false, "print progress until every move is done")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "how often --wait checks")
	return cmd
}

func newReassignCancel(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel TOPIC:PARTITION ...",
		Short: "Cancel moves in progress, back to the replicas before them",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			targets, err := parseReassignTargets(args, false)
			if err != nil {
				return err
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			var req kadm.AlterPartitionAssignmentsReq
			for _, t := range targets {
				req.CancelAssign(t.topic, t.partition)
			}
			if err := alterReassignments(cmd, conn, adm, req, false); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancelled %d move(s)\n", len(targets))
			return nil
		},
	}
}

// alterReassignments sends req and fails with every partition's error.
func alterReassignments(cmd *cobra.Command, conn *connection, adm *kadm.Client, req kadm.AlterPartitionAssignmentsReq, forbidRFChange bool) error {
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()
	if forbidRFChange {
		ctx = kadm.ForbidAlterRf(ctx)
	}
	res, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	var failed []string
	res.Each(func(r kadm.AlterPartitionAssignmentsResponse) {
		if r.Err != nil {
			msg := r.Err.Error()
			if r.ErrMessage != "" {
				msg += ": " + r.ErrMessage
			}
			failed = append(failed, fmt.Sprintf("%s:%d: %s", r.Topic, r.Partition, msg))
		}
	})
	if len(failed) > 0 {
		slices.Sort(failed)
		return fmt.Errorf("%s", strings.Join(failed, "\n"))
	}
	return nil
}

func newReassignList(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:   "list [TOPIC ...]",
		Short: "List the moves in progress: replicas, adding, removing",
		Long: `List the moves in progress, of every topic or of the topics named: each
partition's replicas (the new ones and those leaving), the replicas being
added and those being removed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			moving, err := listReassignments(ctx, adm, args)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			return printReassignments(cmd.OutOrStdout(), moving)
		},
	}
}

// listReassignments lists the moves of the topics named, or of all.
func listReassignments(ctx context.Context, adm *kadm.Client, topics []string) ([]kadm.ListPartitionReassignmentsResponse, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, err
	}
	set := kadm.TopicsSet{}
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			return nil, fmt.Errorf("%s: %w", t.Topic, t.Err)
		}
		for _, p := range t.Partitions.Sorted() {
			set.Add(t.Topic, p.Partition)
		}
	}
	res, err := adm.ListPartitionReassignments(ctx, set)
	if err != nil {
		return nil, err
	}
	return res.Sorted(), nil
}

func printReassignments(out io.Writer, moving []kadm.ListPartitionReassignmentsResponse) error {
	if len(moving) == 0 {
		_, err := fmt.Fprintln(out, "no reassignment in progress")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tREPLICAS\tADDING\tREMOVING")
	for _, m := range moving {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", m.Topic, m.Partition, idList(m.Replicas), idList(m.AddingReplicas), idList(m.RemovingReplicas))
	}
	return tw.Flush()
}

func idList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
