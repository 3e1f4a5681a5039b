package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newTopicCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, alter and delete topics, and delete records, on any Kafka cluster",
	}
	conn.register(cmd)
	cmd.AddCommand(
		newTopicCreate(&conn),
		newTopicList(&conn),
		newTopicDescribe(&conn),
		newTopicDelete(&conn),
		newTopicAlter(&conn),
		newTopicAlterConfig(&conn),
		newTopicDeleteRecords(&conn),
	)
	RejectUnknownSubcommands(cmd)
	return cmd
}

func newTopicCreate(conn *connection) *cobra.Command {
	var (
		partitions  int32
		replication int16
		configs     []string
		ifNotExists bool
	)
	cmd := &cobra.Command{
		Use:   "create TOPIC...",
		Short: "Create topics",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			if partitions == 0 || partitions < -1 {
				return fmt.Errorf("invalid --partitions %d: want a positive count or -1 for the broker default", partitions)
			}
			if replication == 0 || replication < -1 {
				return fmt.Errorf("invalid --replication-factor %d: want a positive count or -1 for the broker default", replication)
			}
			cfg := map[string]*string{}
			for _, kv := range configs {
				k, v, err := parseKeyValue("--config", kv)
				if err != nil {
					return err
				}
				cfg[k] = &v
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			resps, err := adm.CreateTopics(ctx, partitions, replication, cfg, topics...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, t := range topics {
				r, ok := resps[t]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("topic %q: no answer from the cluster", t))
				case errors.Is(r.Err, kerr.TopicAlreadyExists) && ifNotExists:
					fmt.Fprintf(out, "topic %q already exists\n", t)
				case r.Err != nil:
					errs = append(errs, topicErr(t, r.Err, r.ErrMessage))
				default:
					fmt.Fprintf(out, "created topic %q (partitions %s, replication factor %s)\n",
						t, countOrDefault(int64(r.NumPartitions)), countOrDefault(int64(r.ReplicationFactor)))
				}
			}
			return joinErrors(errs)
		},
	}
	f := cmd.Flags()
	f.Int32VarP(&partitions, "partitions", "p", -1, "number of partitions (-1: the broker's num.partitions)")
	f.Int16VarP(&replication, "replication-factor", "r", -1, "replicas per partition (-1: the broker's default.replication.factor)")
	f.StringArrayVarP(&configs, "config", "c", nil, "topic config key=value (repeatable)")
	f.BoolVar(&ifNotExists, "if-not-exists", false, "succeed when the topic already exists")
	return cmd
}

// countOrDefault prints counts the broker did not report (old brokers answer
// CreateTopics without them) as "default".
func countOrDefault(n int64) string {
	if n <= 0 {
		return "default"
	}
	return strconv.FormatInt(n, 10)
}

// topicSummary is one row of topic list.
type topicSummary struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Internal          bool   `json:"internal"`
}

func summarize(td kadm.TopicDetail) topicSummary {
	s := topicSummary{Name: td.Topic, Partitions: len(td.Partitions), Internal: td.IsInternal}
	if p, ok := td.Partitions[0]; ok {
		s.ReplicationFactor = len(p.Replicas)
	}
	return s
}

func newTopicList(conn *connection) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics with their partition count, replication factor and internal flag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			tds, err := adm.ListTopicsWithInternal(ctx)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			rows := []topicSummary{}
			for _, td := range tds.Sorted() {
				if td.Err != nil {
					return topicErr(td.Topic, td.Err, "")
				}
				rows = append(rows, summarize(td))
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, rows)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPARTITIONS\tREPLICATION-FACTOR\tINTERNAL")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%t\n", r.Name, r.Partitions, r.ReplicationFactor, r.Internal)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// topicDescription is the JSON form of topic describe.
type topicDescription struct {
	Name              string                 `json:"name"`
	ID                string                 `json:"id"`
	Internal          bool                   `json:"internal"`
	ReplicationFactor int                    `json:"replication_factor"`
	Partitions        []partitionDescription `json:"partitions"`
	Configs           []configDescription    `json:"configs"`
}

// partitionDescription is one partition of topic describe. The offsets are
// null when the partition's leader could not list them (Error says why) and
// in a report (--under-replicated and the like), which does not list them.
// The flags are kafka-topics.sh's: UnderReplicated, an ISR smaller than the
// replicas; UnderMinISR, no leader or an ISR smaller than the topic's
// min.insync.replicas; Offline, no leader or one the cluster does not list
// as live.
type partitionDescription struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	UnderReplicated bool    `json:"under_replicated"`
	UnderMinISR     bool    `json:"under_min_isr"`
	Offline         bool    `json:"offline"`
	LogStartOffset  *int64  `json:"log_start_offset"`
	HighWatermark   *int64  `json:"high_watermark"`
	Error           string  `json:"error,omitempty"`
}

// reportedPartition is one row of a report over all topics.
type reportedPartition struct {
	Topic string `json:"topic"`
	partitionDescription
}

type configDescription struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

// partitionReport picks the partitions a report shows: any flag asked for
// that the partition has.
type partitionReport struct {
	underReplicated, underMinISR, unavailable bool
}

func (r partitionReport) on() bool { return r.underReplicated || r.underMinISR || r.unavailable }

func (r partitionReport) shows(p partitionDescription) bool {
	return r.underReplicated && p.UnderReplicated || r.underMinISR && p.UnderMinISR || r.unavailable && p.Offline
}

func newTopicDescribe(conn *connection) *cobra.Command {
	var asJSON, allConfigs bool
	var report partitionReport
	cmd := &cobra.Command{
		Use:   "describe [TOPIC...]",
		Short: "Show partitions (leader, replicas, ISR, offline, under-replicated, offsets) and non-default configs of topics",
		Long: `Show each partition of the topics (every topic, internal ones too, when none is
named) with its leader, leader epoch, replicas, ISR, offline replicas, log start
offset and high watermark, and the topics' non-default configs, as
kafka-topics.sh --describe does. FLAGS marks a partition
  under-replicated  its ISR is smaller than its replicas
  under-min-isr     it has no leader, or its ISR is smaller than the topic's
                    min.insync.replicas (acks=all produces fail)
  offline           it has no leader, or its leader is not a live broker

--under-replicated, --under-min-isr and --unavailable turn the output into a
report, as kafka-topics.sh --describe --under-replicated-partitions,
--under-min-isr-partitions and --unavailable-partitions do: one table of the
partitions that have any of the flags asked for, over the named topics or all
of them, without offsets or configs (--json: an array of those partitions,
each with its topic). An empty report means none has.`,
		RunE: func(cmd *cobra.Command, topics []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			md, err := adm.Metadata(ctx, topics...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			for _, t := range topics {
				td, ok := md.Topics[t]
				if !ok {
					return fmt.Errorf("topic %q does not exist", t)
				}
				if td.Err != nil {
					return topicErr(t, td.Err, "")
				}
			}
			if len(topics) == 0 {
				for _, td := range md.Topics.Sorted() {
					if td.Err != nil {
						return topicErr(td.Topic, td.Err, "")
					}
					topics = append(topics, td.Topic)
				}
			}
			var offsets *boundaries
			if !report.on() && len(topics) > 0 {
				b, err := listBoundaries(ctx, adm, topics)
				if err != nil {
					return conn.reachErr(cmd, err)
				}
				offsets = &b
			}
			var rcs kadm.ResourceConfigs
			if len(topics) > 0 {
				if rcs, err = adm.DescribeTopicConfigs(ctx, topics...); err != nil {
					return conn.reachErr(cmd, err)
				}
			}
			live := map[int32]bool{}
			for _, b := range md.Brokers {
				live[b.NodeID] = true
			}
			descs := make([]topicDescription, 0, len(topics))
			for _, t := range topics {
				rc, err := rcs.On(t, nil)
				if err == nil {
					err = rc.Err
				}
				if err != nil {
					return topicErr(t, err, rc.ErrMessage)
				}
				descs = append(descs, describeTopic(md.Topics[t], offsets, live, rc.Configs, allConfigs))
			}
			out := cmd.OutOrStdout()
			if report.on() {
				rows := reportPartitions(descs, report)
				if asJSON {
					return writeJSON(out, rows)
				}
				return printReport(out, rows)
			}
			if asJSON {
				return writeJSON(out, descs)
			}
			for i, d := range descs {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := printDescription(out, d); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print a JSON array instead of tables")
	f.BoolVar(&allConfigs, "all-configs", false, "show configs at their default value too")
	f.BoolVar(&report.underReplicated, "under-replicated", false, "report only the partitions whose ISR is smaller than their replicas")
	f.BoolVar(&report.underMinISR, "under-min-isr", false, "report only the partitions without a leader or with an ISR below min.insync.replicas")
	f.BoolVar(&report.unavailable, "unavailable", false, "report only the partitions without a live leader")
	return cmd
}

// reportPartitions lists the partitions a report shows, topic by topic.
func reportPartitions(descs []topicDescription, report partitionReport) []reportedPartition {
	rows := []reportedPartition{}
	for _, d := range descs {
		for _, p := range d.Partitions {
			if report.shows(p) {
				rows = append(rows, reportedPartition{Topic: d.Name, partitionDescription: p})
			}
		}
	}
	return rows
}

// boundaries are the log start offsets and high watermarks of partitions.
type boundaries struct {
	starts, ends kadm.ListedOffsets
}

// listBoundaries lists the log start offsets and high watermarks of the
// topics. A partition whose leader fails the listing has its error in the
// result; only a listing that fails as a whole is an error.
func listBoundaries(ctx context.Context, adm *kadm.Client, topics []string) (boundaries, error) {
	var b boundaries
	var err error
	if b.starts, err = adm.ListStartOffsets(ctx, topics...); err != nil && !partialShards(err) {
		return boundaries{}, err
	}
	if b.ends, err = adm.ListEndOffsets(ctx, topics...); err != nil && !partialShards(err) {
		return boundaries{}, err
	}
	return b, nil
}

// partialShards reports a kadm error that only some brokers failed; the
// answers of the others are in the result.
func partialShards(err error) bool {
	_, ok := errors.AsType[*kadm.ShardErrors](err)
	return ok
}

// lookupOffset finds one partition in a listing: the offset, or why there
// is none.
func lookupOffset(l kadm.ListedOffsets, topic string, p int32) (*int64, string) {
	lo, ok := l.Lookup(topic, p)
	switch {
	case !ok:
		return nil, "no offset in the ListOffsets answer"
	case lo.Err != nil:
		return nil, kafkaReason(lo.Err, "")
	}
	return &lo.Offset, ""
}

// describeTopic builds one topic's description. offsets is nil for a
// report, which lists none; live are the brokers Metadata lists.
func describeTopic(td kadm.TopicDetail, offsets *boundaries, live map[int32]bool, configs []kadm.Config, all bool) topicDescription {
	d := topicDescription{
		Name:              td.Topic,
		ID:                topicIDString(td.ID),
		Internal:          td.IsInternal,
		ReplicationFactor: summarize(td).ReplicationFactor,
		Partitions:        []partitionDescription{},
		Configs:           []configDescription{},
	}
	minISR := minInSyncReplicas(configs)
	for _, p := range td.Partitions.Sorted() {
		pd := partitionDescription{
			Partition:       p.Partition,
			Leader:          p.Leader,
			LeaderEpoch:     p.LeaderEpoch,
			Replicas:        orEmpty(p.Replicas),
			ISR:             orEmpty(p.ISR),
			OfflineReplicas: orEmpty(p.OfflineReplicas),
		}
		flagPartition(&pd, minISR, live)
		var startErr, endErr string
		if offsets != nil {
			pd.LogStartOffset, startErr = lookupOffset(offsets.starts, td.Topic, p.Partition)
			pd.HighWatermark, endErr = lookupOffset(offsets.ends, td.Topic, p.Partition)
		}
		switch {
		case p.Err != nil:
			pd.Error = kafkaReason(p.Err, "")
		case startErr != "":
			pd.Error = "log start offset: " + startErr
		case endErr != "":
			pd.Error = "high watermark: " + endErr
		}
		d.Partitions = append(d.Partitions, pd)
	}
	for _, c := range configs {
		if !all && c.Source == kmsg.ConfigSourceDefaultConfig {
			continue
		}
		d.Configs = append(d.Configs, configDescription{
			Name:      c.Key,
			Value:     c.Value,
			Source:    c.Source.String(),
			Sensitive: c.Sensitive,
		})
	}
	sort.Slice(d.Configs, func(i, j int) bool { return d.Configs[i].Name < d.Configs[j].Name })
	return d
}

// flagPartition sets a partition's flags as kafka-topics.sh judges them.
// minISR is the topic's min.insync.replicas, 0 when unknown.
func flagPartition(p *partitionDescription, minISR int, live map[int32]bool) {
	led := p.Leader >= 0
	p.UnderReplicated = len(p.ISR) < len(p.Replicas)
	p.UnderMinISR = !led || len(p.ISR) < minISR
	p.Offline = !led || !live[p.Leader]
}

// minInSyncReplicas is the topic's min.insync.replicas from its configs, 0
// when the cluster did not say.
func minInSyncReplicas(configs []kadm.Config) int {
	for _, c := range configs {
		if c.Key == "min.insync.replicas" && c.Value != nil {
			if n, err := strconv.Atoi(*c.Value); err == nil {
				return n
			}
		}
	}
	return 0
}

// partitionFlags renders the flags for text: "-" for none.
func partitionFlags(p partitionDescription) string {
	var flags []string
	if p.UnderReplicated {
		flags = append(flags, "under-replicated")
	}
	if p.UnderMinISR {
		flags = append(flags, "under-min-isr")
	}
	if p.Offline {
		flags = append(flags, "offline")
	}
	return dashIfEmpty(strings.Join(flags, ","))
}

// topicIDString prints a topic ID the way Kafka's tools do (Uuid.toString:
// URL-safe base64 without padding); an all-zero ID means the cluster has none.
func topicIDString(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return "-"
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func printDescription(out io.Writer, d topicDescription) error {
	fmt.Fprintf(out, "Topic: %s\tID: %s\tPartitions: %d\tReplicationFactor: %d\tInternal: %t\n",
		d.Name, d.ID, len(d.Partitions), d.ReplicationFactor, d.Internal)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tOFFLINE\tFLAGS\tLOG-START-OFFSET\tHIGH-WATERMARK\tERROR")
	for _, p := range d.Partitions {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Partition, p.Leader, p.LeaderEpoch,
			joinIDs(p.Replicas), joinIDs(p.ISR), joinIDs(p.OfflineReplicas), partitionFlags(p),
			offsetOrDash(p.LogStartOffset), offsetOrDash(p.HighWatermark), dashIfEmpty(p.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(d.Configs) == 0 {
		fmt.Fprintln(out, "Configs: (all default)")
		return nil
	}
	fmt.Fprintln(out, "Configs:")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tSOURCE")
	for _, c := range d.Configs {
		v := "(null)"
		switch {
		case c.Sensitive:
			v = "(sensitive)"
		case c.Value != nil:
			v = *c.Value
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, v, c.Source)
	}
	return tw.Flush()
}

// printReport prints a report's partitions as one table.
func printReport(out io.Writer, rows []reportedPartition) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tOFFLINE\tFLAGS\tERROR")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Topic, r.Partition, r.Leader, r.LeaderEpoch,
			joinIDs(r.Replicas), joinIDs(r.ISR), joinIDs(r.OfflineReplicas), partitionFlags(r.partitionDescription), dashIfEmpty(r.Error))
	}
	return tw.Flush()
}

func joinIDs(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ",")
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newTopicDelete(conn *connection) *cobra.Command {
	var ifExists bool
	cmd := &cobra.Command{
		Use:   "delete TOPIC...",
		Short: "Delete topics",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			resps, err := adm.DeleteTopics(ctx, topics...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, t := range topics {
				r, ok := resps[t]
				switch {
				case !ok:
					if !ifExists {
						errs = append(errs, fmt.Errorf("topic %q does not exist", t))
					}
				case errors.Is(r.Err, kerr.UnknownTopicOrPartition) && ifExists:
				case r.Err != nil:
					errs = append(errs, topicErr(t, r.Err, r.ErrMessage))
				default:
					fmt.Fprintf(out, "deleted topic %q\n", t)
				}
			}
			return joinErrors(errs)
		},
	}
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed when a topic does not exist")
	return cmd
}

func newTopicAlter(conn *connection) *cobra.Command {
	var partitions int32
	cmd := &cobra.Command{
		Use:   "alter TOPIC... --partitions N",
		Short: "Grow topics to N partitions (kafka-topics.sh --alter --partitions)",
		Long: `Grow topics to N partitions in all (CreatePartitions), as kafka-topics.sh
--alter --partitions does. Kafka never removes partitions, so N must be above
the current count. Records keep the partition they were written to: keyed
records written from now on may hash to another partition than earlier ones
with the same key. Configs are altered with samsa topic alter-config.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			if !cmd.Flags().Changed("partitions") {
				return errors.New("nothing to alter: give --partitions N (configs: samsa topic alter-config)")
			}
			if partitions <= 0 {
				return fmt.Errorf("invalid --partitions %d: must be positive", partitions)
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			before, err := adm.ListTopics(ctx, topics...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			resps, err := adm.UpdatePartitions(ctx, int(partitions), topics...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, t := range topics {
				r, ok := resps[t]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("topic %q: no answer from the cluster", t))
				case r.Err != nil:
					errs = append(errs, topicErr(t, r.Err, r.ErrMessage))
				default:
					fmt.Fprintf(out, "altered topic %q: %d partitions (was %d)\n", t, partitions, len(before[t].Partitions))
				}
			}
			return joinErrors(errs)
		},
	}
	cmd.Flags().Int32VarP(&partitions, "partitions", "p", 0, "the number of partitions each topic is to have")
	return cmd
}

func newTopicAlterConfig(conn *connection) *cobra.Command {
	var sets, deletes []string
	cmd := &cobra.Command{
		Use:   "alter-config TOPIC... [--set k=v]... [--delete k]...",
		Short: "Set or delete topic configs (IncrementalAlterConfigs)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, topics []string) error {
			var alters []kadm.AlterConfig
			for _, kv := range sets {
				k, v, err := parseKeyValue("--set", kv)
				if err != nil {
					return err
				}
				alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
			}
			for _, k := range deletes {
				if k == "" || strings.Contains(k, "=") {
					return fmt.Errorf("invalid --delete %q: want a config name", k)
				}
				alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
			}
			if len(alters) == 0 {
				return errors.New("nothing to alter: give --set k=v or --delete k")
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			resps, err := adm.AlterTopicConfigs(ctx, alters, topics...)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, t := range topics {
				r, err := resps.On(t, nil)
				if err == nil {
					err = r.Err
				}
				if err != nil {
					errs = append(errs, topicErr(t, err, r.ErrMessage))
					continue
				}
				fmt.Fprintf(out, "altered configs of topic %q\n", t)
			}
			return joinErrors(errs)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "config key=value to set (repeatable)")
	cmd.Flags().StringArrayVar(&deletes, "delete", nil, "config name to delete, reverting it to the default (repeatable)")
	return cmd
}

func newTopicDeleteRecords(conn *connection) *cobra.Command {
	var (
		partition int32
		offset    int64
	)
	cmd := &cobra.Command{
		Use:   "delete-records TOPIC --offset O [--partition P]",
		Short: "Delete the records before an offset (kafka-delete-records.sh)",
		Long: `Delete the records of a partition before --offset (DeleteRecords), as
kafka-delete-records.sh does: the partition's log start offset moves up to
it, the records below can no longer be read, and the segments wholly below
it are removed. --offset -1 means the high watermark: everything. Without
--partition every partition of the topic is cut at the same offset. An
offset past the high watermark is refused; one at or below the log start
offset changes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			if !cmd.Flags().Changed("offset") {
				return errors.New("give --offset: records before it are deleted (-1: all of them)")
			}
			if offset < -1 {
				return fmt.Errorf("invalid --offset %d: want an offset, or -1 for the high watermark", offset)
			}
			if partition < -1 {
				return fmt.Errorf("invalid --partition %d", partition)
			}
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			td, err := topicMetadata(ctx, adm, topic)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			partitions := td.Partitions.Numbers()
			if partition >= 0 {
				if err := checkPartition(td, partition); err != nil {
					return err
				}
				partitions = []int32{partition}
			}
			var offsets kadm.Offsets
			for _, p := range partitions {
				offsets.AddOffset(topic, p, offset, -1)
			}
			resps, err := adm.DeleteRecords(ctx, offsets)
			if err != nil && !partialShards(err) {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, p := range partitions {
				r, ok := resps.Lookup(topic, p)
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("topic %q partition %d: no answer from the cluster%s", topic, p, reasonSuffix(err)))
				case r.Err != nil:
					errs = append(errs, fmt.Errorf("topic %q partition %d: %s", topic, p, kafkaReason(r.Err, "")))
				default:
					fmt.Fprintf(out, "topic %q partition %d: log start offset now %d\n", topic, p, r.LowWatermark)
				}
			}
			return joinErrors(errs)
		},
	}
	f := cmd.Flags()
	f.Int64Var(&offset, "offset", 0, "delete the records before this offset (-1: the high watermark, so all)")
	f.Int32Var(&partition, "partition", -1, "only this partition (-1: every partition)")
	return cmd
}

// reasonSuffix renders an optional error as the end of a sentence.
func reasonSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
