package cli

// Share groups (KIP-932) in the group commands. A share group has no
// committed offsets: each share-partition has a start offset (below it
// every record is done with) and, past it, in-flight records the leader
// tracks one by one. The commands show what Kafka's kafka-share-groups.sh
// shows (members from ShareGroupDescribe, START-OFFSET and LAG from
// DescribeShareGroupOffsets) and, from the brokers' HTTP listeners, the
// in-flight records, which no Kafka request returns.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sharePartition is one share-partition of a share group. StartOffset is
// null until the partition is initialized (no member has fetched it yet);
// Lag is null where the broker cannot say (DescribeShareGroupOffsets v0, or
// a leader elsewhere). InFlight is read with --http only.
type sharePartition struct {
	Topic       string         `json:"topic"`
	Partition   int32          `json:"partition"`
	StartOffset *int64         `json:"start_offset"`
	Lag         *int64         `json:"lag"`
	LeaderEpoch int32          `json:"leader_epoch"`
	InFlight    *shareInFlight `json:"in_flight,omitempty"`
	Error       string         `json:"error,omitempty"`
}

// shareInFlight is a share-partition's window of in-flight records as its
// leader reports it on GET /v1/share-partitions: [StartOffset, EndOffset)
// and how many of them are in each state. Available ones wait for a
// (re)delivery; Acknowledged and Archived ones are done but above a record
// that is not, so the start offset cannot pass them yet.
type shareInFlight struct {
	StartOffset  int64 `json:"start_offset"`
	EndOffset    int64 `json:"end_offset"`
	Available    int64 `json:"available"`
	Acquired     int64 `json:"acquired"`
	Acknowledged int64 `json:"acknowledged"`
	Archived     int64 `json:"archived"`
	LeaderEpoch  int32 `json:"leader_epoch"`
}

// describeShareGroups returns the groups the brokers describe as share
// groups, and those failing with an error other than "not a share group".
func describeShareGroups(ctx context.Context, cl *kgo.Client, groups []string) map[string]*groupDescription {
	req := kmsg.NewPtrShareGroupDescribeRequest()
	req.GroupIDs = groups
	out := map[string]*groupDescription{}
	if len(groups) == 0 {
		return out
	}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			continue // no share groups there, or unreachable: the classic describe reports it
		}
		for _, rg := range shard.Resp.(*kmsg.ShareGroupDescribeResponse).Groups {
			err := kerr.ErrorForCode(rg.ErrorCode)
			switch {
			case errors.Is(err, kerr.GroupIDNotFound), errors.Is(err, kerr.UnsupportedVersion):
			case err != nil:
				out[rg.GroupID] = &groupDescription{Group: rg.GroupID, err: err, errMessage: derefString(rg.ErrorMessage)}
			default:
				out[rg.GroupID] = shareGroup(&rg)
			}
		}
	}
	return out
}

func shareGroup(rg *kmsg.ShareGroupDescribeResponseGroup) *groupDescription {
	d := &groupDescription{
		Group:        rg.GroupID,
		Type:         "share",
		State:        rg.GroupState,
		ProtocolType: "share",
		Protocol:     rg.Assignor,
		Members:      []groupMember{},
	}
	for _, rm := range rg.Members {
		m := groupMember{MemberID: rm.MemberID, ClientID: rm.ClientID, Host: rm.ClientHost, Assignment: []topicPartitions{}}
		for _, a := range rm.Assignment.TopicPartitions {
			name := a.Topic
			if name == "" {
				name = unnamedTopic + topicIDString(a.TopicID)
			}
			m.Assignment = append(m.Assignment, topicPartitions{Topic: name, Partitions: a.Partitions})
		}
		d.subscribed = append(d.subscribed, rm.SubscribedTopicNames...)
		d.Members = append(d.Members, m)
	}
	return d
}

// loadShareOffsets fills the share-partitions: every partition the group
// has a start offset for (DescribeShareGroupOffsets of all its topics) or
// is assigned, and with httpAddrs the in-flight records their leaders
// report. An HTTP failure does not fail the describe: it is kept in
// InFlightError for the output to show.
func (d *groupDescription) loadShareOffsets(ctx context.Context, adm *kadm.Client, httpAddrs []string) error {
	described, err := adm.DescribeShareGroupOffsets(ctx, d.Group)
	if err != nil {
		return err
	}
	got, ok := described[d.Group]
	if !ok {
		return errors.New("no answer from the cluster")
	}
	if got.Err != nil && !errors.Is(got.Err, kerr.GroupIDNotFound) {
		return got.Err
	}
	rows := map[tp]*sharePartition{}
	row := func(t string, p int32) *sharePartition {
		r := rows[tp{t, p}]
		if r == nil {
			r = &sharePartition{Topic: t, Partition: p, LeaderEpoch: -1}
			rows[tp{t, p}] = r
		}
		return r
	}
	got.Offsets.Each(func(o kadm.ShareOffset) {
		r := row(o.Topic, o.Partition)
		r.LeaderEpoch = o.LeaderEpoch
		switch {
		case o.Err != nil:
			r.Error = kafkaReason(o.Err, "")
		case o.StartOffset >= 0:
			r.StartOffset = &o.StartOffset
		}
		if o.Err == nil && o.Lag >= 0 {
			r.Lag = &o.Lag
			d.TotalLag += o.Lag
		}
	})
	for _, m := range d.Members {
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				row(a.Topic, p)
			}
		}
	}
	if len(httpAddrs) > 0 {
		inFlight, err := readSharePartitions(ctx, httpAddrs, d.Group)
		if err != nil {
			d.InFlightError = err.Error()
		}
		for k, f := range inFlight {
			row(k.topic, k.partition).InFlight = f
		}
	}
	d.SharePartitions = make([]sharePartition, 0, len(rows))
	for _, r := range rows {
		d.SharePartitions = append(d.SharePartitions, *r)
	}
	slices.SortFunc(d.SharePartitions, func(a, b sharePartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return nil
}

// sharePartitionStatus is one element of GET /v1/share-partitions (the
// broker's SharePartitionStatus; the CLI does not import the broker).
type sharePartitionStatus struct {
	Group        string `json:"group"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	LeaderEpoch  int32  `json:"leader_epoch"`
	StartOffset  int64  `json:"start_offset"`
	EndOffset    int64  `json:"end_offset"`
	Available    int64  `json:"available"`
	Acquired     int64  `json:"acquired"`
	Acknowledged int64  `json:"acknowledged"`
	Archived     int64  `json:"archived"`
}

// readSharePartitions asks every address for the group's share-partitions
// and merges the answers: each broker reports those it leads, and where two
// report one partition (a leader that moved), the higher leader epoch wins.
// What could be read is returned beside the error of what could not.
func readSharePartitions(ctx context.Context, addrs []string, group string) (map[tp]*shareInFlight, error) {
	cl := &http.Client{Timeout: 5 * time.Second}
	out := map[tp]*shareInFlight{}
	var errs []error
	for _, addr := range addrs {
		sts, err := getSharePartitions(ctx, cl, addr, group)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
			continue
		}
		for _, s := range sts {
			if s.Group != group {
				continue
			}
			k := tp{s.Topic, s.Partition}
			if have := out[k]; have != nil && have.LeaderEpoch >= s.LeaderEpoch {
				continue
			}
			out[k] = &shareInFlight{StartOffset: s.StartOffset, EndOffset: s.EndOffset, Available: s.Available,
				Acquired: s.Acquired, Acknowledged: s.Acknowledged, Archived: s.Archived, LeaderEpoch: s.LeaderEpoch}
		}
	}
	return out, errors.Join(errs...)
}

func getSharePartitions(ctx context.Context, cl *http.Client, addr, group string) ([]sharePartitionStatus, error) {
	u := "http://" + addr + "/v1/share-partitions?group=" + url.QueryEscape(group)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var sts []sharePartitionStatus
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&sts); err != nil {
		return nil, fmt.Errorf("reading the share-partitions: %w", err)
	}
	return sts, nil
}

// printShareGroup prints a share group: its members, then one row per
// share-partition, with the in-flight columns when --http read them.
func printShareGroup(out io.Writer, d *groupDescription, withInFlight bool) error {
	fmt.Fprintf(out, "Group: %s\tType: share\tState: %s\tAssignor: %s\tMembers: %d\tLag: %d\n",
		d.Group, dashIfEmpty(d.State), dashIfEmpty(d.Protocol), len(d.Members), d.TotalLag)
	if len(d.Members) > 0 {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER-ID\tCLIENT-ID\tHOST\tASSIGNMENT")
		for _, m := range d.Members {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.MemberID, dashIfEmpty(m.ClientID), dashIfEmpty(m.Host), formatAssignment(m.Assignment))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if d.InFlightError != "" {
		fmt.Fprintf(out, "In-flight: not all read: %s\n", d.InFlightError)
	}
	if len(d.SharePartitions) == 0 {
		fmt.Fprintln(out, "Share-partitions: (none)")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "TOPIC\tPARTITION\tSTART-OFFSET\tLAG"
	if withInFlight {
		header += "\tIN-FLIGHT-END\tACQUIRED\tAVAILABLE\tACKNOWLEDGED\tARCHIVED"
	}
	fmt.Fprintln(tw, header+"\tERROR")
	for _, p := range d.SharePartitions {
		line := fmt.Sprintf("%s\t%d\t%s\t%s", p.Topic, p.Partition, offsetOrDash(p.StartOffset), offsetOrDash(p.Lag))
		if withInFlight {
			if f := p.InFlight; f != nil {
				line += fmt.Sprintf("\t%d\t%d\t%d\t%d\t%d", f.EndOffset, f.Acquired, f.Available, f.Acknowledged, f.Archived)
			} else {
				line += "\t-\t-\t-\t-\t-"
			}
		}
		fmt.Fprintln(tw, line+"\t"+dashIfEmpty(p.Error))
	}
	return tw.Flush()
}

// shareStartOffsets are a share group's start offsets in the shape the
// reset planner takes commits in, so --all-topics and --shift-by work on
// them as on committed offsets.
func shareStartOffsets(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	described, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	got := described[group]
	if got.Err != nil && !errors.Is(got.Err, kerr.GroupIDNotFound) {
		return nil, got.Err
	}
	out := kadm.OffsetResponses{}
	got.Offsets.Each(func(o kadm.ShareOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]kadm.OffsetResponse{}
		}
		out[o.Topic][o.Partition] = kadm.OffsetResponse{Offset: kadm.Offset{Topic: o.Topic, Partition: o.Partition,
			At: o.StartOffset, LeaderEpoch: o.LeaderEpoch}, Err: o.Err}
	})
	return out, nil
}

// commitShareReset sets the plan's start offsets with AlterShareGroupOffsets,
// which Kafka takes only while the share group is empty.
func commitShareReset(ctx context.Context, adm *kadm.Client, group string, rows []resetRow) error {
	var offsets kadm.Offsets
	for _, r := range rows {
		offsets.AddOffset(r.Topic, r.Partition, r.NewOffset, -1)
	}
	resps, err := adm.AlterShareGroupOffsets(ctx, group, offsets)
	if errors.Is(err, kerr.NonEmptyGroup) {
		return fmt.Errorf("share group %q %w: stop its share consumers before resetting offsets", group, errActiveGroup)
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range rows {
		if perr, ok := resps.Lookup(r.Topic, r.Partition); ok && perr != nil {
			errs = append(errs, fmt.Errorf("group %q: alter topic %q partition %d: %s",
				group, r.Topic, r.Partition, kafkaReason(perr, "")))
		}
	}
	return joinErrors(errs)
}

func newGroupDeleteOffsets(conn *connection) *cobra.Command {
	var topics []string
	cmd := &cobra.Command{
		Use:   "delete-offsets GROUP --topic T...",
		Short: "Delete a share group's state for whole topics (share groups only)",
		Long: `Delete a share group's state (start offsets and in-flight records) for the
topics named, with DeleteShareGroupOffsets (KIP-932), as kafka-share-groups.sh
--delete-offsets does. Kafka allows it only while the group is empty. A member
that later subscribes to the topic starts again from share.auto.offset.reset.

Only share groups are handled: for classic and consumer groups use
reset-offsets.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			if len(topics) == 0 {
				return errors.New("name the topics whose share state to delete with --topic")
			}
			for _, t := range topics {
				if t == "" || strings.Contains(t, ":") {
					return fmt.Errorf("invalid --topic %q: give a whole topic (share state is deleted per topic)", t)
				}
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			adm := conn.adminFor(cl)
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			ds, err := describeGroups(ctx, cl, adm, []string{group})
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			d := ds[group]
			switch {
			case d.err != nil:
				return groupErr(group, d.err, d.errMessage)
			case d.Type != "share":
				return fmt.Errorf("group %q is a %s group: delete-offsets handles share groups only; use reset-offsets", group, d.Type)
			case d.State != "Empty":
				return fmt.Errorf("share group %q %w (state %s, members: %d): stop its share consumers first",
					group, errActiveGroup, d.State, len(d.Members))
			}
			topics = uniq(topics)
			resps, err := adm.DeleteShareGroupOffsets(ctx, group, topics...)
			if errors.Is(err, kerr.NonEmptyGroup) {
				return fmt.Errorf("share group %q %w: stop its share consumers first", group, errActiveGroup)
			}
			if err != nil {
				return groupRequestErr(cmd, conn, group, err)
			}
			var errs []error
			for _, t := range topics {
				terr, ok := resps.Lookup(t)
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("group %q topic %q: no answer from the cluster", group, t))
				case terr != nil:
					errs = append(errs, fmt.Errorf("group %q: %w", group, topicErr(t, terr, "")))
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "deleted the share state of topic %q in group %q\n", t, group)
				}
			}
			return joinErrors(errs)
		},
	}
	cmd.Flags().StringArrayVar(&topics, "topic", nil, "topic whose share state to delete (repeatable)")
	return cmd
}
