package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupTypes are the group types the group commands handle: classic groups
// (JoinGroup/SyncGroup), KIP-848 consumer groups (ConsumerGroupHeartbeat)
// and KIP-932 share groups (ShareGroupHeartbeat, group_share.go). Streams
// groups keep offsets their own way and are left out.
var groupTypes = []string{"classic", "consumer", "share"}

// groupStates are the states Kafka reports for classic, consumer and share
// groups (share groups are only Empty, Stable or Dead), spelled as brokers
// spell them; some brokers match the ListGroups filter case-sensitively, so
// --state is normalized to these.
var groupStates = []string{"Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling", "Dead"}

func newGroupCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe, reset the offsets of and delete consumer and share groups on any Kafka cluster",
	}
	conn.register(cmd)
	cmd.AddCommand(
		newGroupList(&conn),
		newGroupDescribe(&conn),
		newGroupResetOffsets(&conn),
		newGroupDelete(&conn),
		newGroupDeleteOffsets(&conn),
	)
	RejectUnknownSubcommands(cmd)
	return cmd
}

// groupErr names the group in an error and translates the common Kafka codes
// into plain sentences.
func groupErr(group string, err error, brokerMessage string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.GroupIDNotFound):
		return fmt.Errorf("group %q does not exist", group)
	case errors.Is(err, kerr.NonEmptyGroup):
		return fmt.Errorf("group %q has active members", group)
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return fmt.Errorf("not authorized to access group %q", group)
	case errors.Is(err, kerr.InvalidGroupID):
		return fmt.Errorf("invalid group id %q", group)
	}
	return fmt.Errorf("group %q: %s", group, kafkaReason(err, brokerMessage))
}

// groupRequestErr renders the failure of a request about group: Kafka codes
// through groupErr, transport failures through reachErr.
func groupRequestErr(cmd *cobra.Command, conn *connection, group string, err error) error {
	if _, ok := errors.AsType[*kerr.Error](err); ok {
		return groupErr(group, err, "")
	}
	return conn.reachErr(cmd, err)
}

// parseChoices normalizes comma-separated flag values to their spelling in
// valid, matching case-insensitively and dropping repeats.
func parseChoices(flag string, given, valid []string) ([]string, error) {
	var out []string
	for _, g := range given {
		i := slices.IndexFunc(valid, func(v string) bool { return strings.EqualFold(v, strings.TrimSpace(g)) })
		if i < 0 {
			return nil, fmt.Errorf("invalid %s %q: want one of %s", flag, g, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, valid[i]) {
			out = append(out, valid[i])
		}
	}
	return out, nil
}

// groupSummary is one row of group list.
type groupSummary struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	Type         string `json:"type"`
	ProtocolType string `json:"protocol_type"`
	Members      int    `json:"members"`
}

func newGroupList(conn *connection) *cobra.Command {
	var (
		states, types []string
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List consumer and share groups with their state, type, protocol type and member count",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			states, err := parseChoices("--state", states, groupStates)
			if err != nil {
				return err
			}
			types, err := parseChoices("--type", types, groupTypes)
			if err != nil {
				return err
			}
			if len(types) == 0 {
				types = groupTypes
			}
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			adm := conn.adminFor(cl)
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			rows, err := listGroups(ctx, cl, adm, states, types)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, rows)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tSTATE\tTYPE\tPROTOCOL-TYPE\tMEMBERS")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.Group, dashIfEmpty(r.State), r.Type, dashIfEmpty(r.ProtocolType), r.Members)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&states, "state", nil, "only groups in these states (comma-separated: "+strings.Join(groupStates, ", ")+")")
	f.StringSliceVar(&types, "type", nil, "only groups of these types (comma-separated: classic, consumer, share; default all)")
	f.BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// listGroups lists the groups and counts their members. The filters are
// applied here as well as by the broker: brokers before ListGroups v4 ignore
// the state filter and before v5 the type filter (they know only classic
// groups and report no type).
func listGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, states, types []string) ([]groupSummary, error) {
	listed, err := adm.ListGroupsByType(ctx, types, states...)
	if err != nil {
		return nil, err
	}
	var rows []groupSummary
	var names []string
	for _, lg := range listed.Sorted() {
		typ := cmp.Or(lg.GroupType, "classic")
		if !slices.Contains(types, typ) || !stateMatches(states, lg.State) {
			continue
		}
		rows = append(rows, groupSummary{Group: lg.Group, State: lg.State, Type: typ, ProtocolType: lg.ProtocolType})
		names = append(names, lg.Group)
	}
	if len(rows) == 0 {
		return []groupSummary{}, nil
	}
	infos, err := describeGroups(ctx, cl, adm, names)
	if err != nil {
		return nil, err
	}
	kept := []groupSummary{}
	for _, r := range rows {
		d := infos[r.Group]
		switch {
		case d.err == nil:
			r.Members = len(d.Members)
			r.State = cmp.Or(r.State, d.State)
			r.ProtocolType = cmp.Or(r.ProtocolType, d.ProtocolType)
		case errors.Is(d.err, kerr.GroupIDNotFound):
			// Deleted since the listing: it was there, with no members left.
		default:
			return nil, groupErr(r.Group, d.err, d.errMessage)
		}
		if stateMatches(states, r.State) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// stateMatches reports whether a group in state passes the --state filter;
// an unknown state (old brokers list none) passes until it is known.
func stateMatches(filter []string, state string) bool {
	return len(filter) == 0 || state == "" ||
		slices.ContainsFunc(filter, func(s string) bool { return strings.EqualFold(s, state) })
}

// groupDescription is one group as group describe shows it, whichever
// protocol the group runs.
type groupDescription struct {
	Group string `json:"group"`
	Type  string `json:"type"` // classic, consumer (KIP-848) or share (KIP-932)
	State string `json:"state"`
	// ProtocolType is "consumer" for consumers of either type and "share"
	// for a share group; Protocol is the assignor: chosen by the members
	// of a classic group, by the broker for a consumer or share group.
	ProtocolType string        `json:"protocol_type"`
	Protocol     string        `json:"protocol"`
	Members      []groupMember `json:"members"`
	// Offsets are the committed offsets of a classic or consumer group;
	// a share group has none (null) and SharePartitions instead.
	Offsets         []partitionLag   `json:"offsets"`
	SharePartitions []sharePartition `json:"share_partitions,omitempty"`
	// InFlightError says which --http addresses could not be read.
	InFlightError string `json:"in_flight_error,omitempty"`
	TotalLag      int64  `json:"total_lag"` // sum of the known positive lags

	subscribed []string // topics the members asked for
	err        error    // why the group could not be described
	errMessage string   // the broker's words for err, if any
}

type groupMember struct {
	MemberID   string            `json:"member_id"`
	InstanceID *string           `json:"instance_id"`
	ClientID   string            `json:"client_id"`
	Host       string            `json:"host"`
	Assignment []topicPartitions `json:"assignment"`
}

type topicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// partitionLag is one partition the group has committed to, is assigned,
// or subscribes to. Null offsets are unknown: no commit yet, or the end
// could not be listed (Error says why); the lag is null when either is.
type partitionLag struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset *int64 `json:"committed_offset"`
	LogEndOffset    *int64 `json:"log_end_offset"`
	Lag             *int64 `json:"lag"`
	MemberID        string `json:"member_id"`
	Error           string `json:"error,omitempty"`
}

// tp is a topic partition.
type tp struct {
	topic     string
	partition int32
}

func newGroupDescribe(conn *connection) *cobra.Command {
	var (
		asJSON    bool
		httpAddrs []string
	)
	cmd := &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Show the state, members and per-partition offsets and lag of groups",
		Long: `Show the state, members and per-partition offsets and lag of groups.

For a classic or consumer group, partitions listed are those the group has
committed to, is assigned, or subscribes to; a partition without a commit
shows "-" as its committed offset and lag. Lag is the log end offset (high
watermark) minus the committed offset.

For a share group (KIP-932), as kafka-share-groups.sh --describe: the
assignor, the members with their assignments (a partition may be assigned to
several members), and per share-partition its START-OFFSET (every record
below it is delivered and done with) and LAG (records past it not yet done
with; "-" where the broker cannot say). A partition no member has fetched
yet shows "-" as its start offset. With --http host:port,... (the brokers'
samsa.http.listener addresses) the in-flight records each partition's leader
holds past the start offset are shown too: IN-FLIGHT-END (the first offset
not yet fetched), ACQUIRED (locked by a consumer), AVAILABLE (waiting for a
redelivery), ACKNOWLEDGED and ARCHIVED (done, but above a record that is
not). Kafka has no request for these; give every broker's address, as each
reports the partitions it leads.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			groups := uniq(args)
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			adm := conn.adminFor(cl)
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			infos, err := describeGroups(ctx, cl, adm, groups)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			descs := make([]groupDescription, 0, len(groups))
			for _, g := range groups {
				d := infos[g]
				if d.err != nil {
					return groupErr(g, d.err, d.errMessage)
				}
				load := func() error { return d.loadOffsets(ctx, adm) }
				if d.Type == "share" {
					load = func() error { return d.loadShareOffsets(ctx, adm, httpAddrs) }
				} else if len(httpAddrs) > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: group %q is a %s group: --http reads only share groups' in-flight records\n", g, d.Type)
				}
				if err := load(); err != nil {
					return groupRequestErr(cmd, conn, g, err)
				}
				descs = append(descs, *d)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, descs)
			}
			for i := range descs {
				if i > 0 {
					fmt.Fprintln(out)
				}
				show := func() error { return printGroup(out, &descs[i]) }
				if descs[i].Type == "share" {
					show = func() error { return printShareGroup(out, &descs[i], len(httpAddrs) > 0) }
				}
				if err := show(); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of tables")
	cmd.Flags().StringSliceVar(&httpAddrs, "http", nil,
		"host:port of the brokers' HTTP listeners (samsa.http.listener), to show share groups' in-flight records")
	return cmd
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// describeGroups describes groups of any type. It asks ConsumerGroupDescribe
// (KIP-848) first, then ShareGroupDescribe (KIP-932), and falls back to
// DescribeGroups for the groups neither knows, as Kafka's admin client does:
// a broker answers GROUP_ID_NOT_FOUND for a group of another type there,
// and a broker without KIP-848 or KIP-932 does not take the request at all.
// Every group asked for is in the result, described or with its error.
func describeGroups(ctx context.Context, cl *kgo.Client, adm *kadm.Client, groups []string) (map[string]*groupDescription, error) {
	out := describeConsumerGroups(ctx, cl, groups)
	notFound := func() []string {
		var gs []string
		for _, g := range groups {
			if out[g] == nil {
				gs = append(gs, g)
			}
		}
		return gs
	}
	maps.Copy(out, describeShareGroups(ctx, cl, notFound()))
	classic := notFound()
	if err := resolveAssignedTopics(ctx, adm, out); err != nil {
		return nil, err
	}
	if len(classic) == 0 {
		return out, nil
	}
	described, err := adm.DescribeGroups(ctx, classic...)
	if err != nil && len(described) == 0 {
		return nil, err
	}
	for _, g := range classic {
		d, ok := described[g]
		if !ok {
			out[g] = &groupDescription{Group: g, err: cmp.Or(err, errors.New("no answer from the cluster"))}
			continue
		}
		out[g] = classicGroup(d)
	}
	return out, nil
}

// describeConsumerGroups returns the groups the brokers describe as consumer
// groups, and those failing with an error that is not "ask the classic way".
// It sends the request itself rather than through kadm, whose answer keys
// assignments by topic name alone: a broker that sends only topic IDs (the
// name is optional in the response) would have every assignment merged
// under an empty name.
func describeConsumerGroups(ctx context.Context, cl *kgo.Client, groups []string) map[string]*groupDescription {
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = groups
	out := map[string]*groupDescription{}
	for _, shard := range cl.RequestSharded(ctx, req) {
		if shard.Err != nil {
			continue // unsupported, or unreachable: the classic describe reports it
		}
		for _, rg := range shard.Resp.(*kmsg.ConsumerGroupDescribeResponse).Groups {
			err := kerr.ErrorForCode(rg.ErrorCode)
			switch {
			case errors.Is(err, kerr.GroupIDNotFound), errors.Is(err, kerr.UnsupportedVersion):
			case err != nil:
				out[rg.Group] = &groupDescription{Group: rg.Group, err: err, errMessage: derefString(rg.ErrorMessage)}
			default:
				out[rg.Group] = consumerGroup(&rg)
			}
		}
	}
	return out
}

// unnamedTopic marks an assignment the broker sent by topic ID only; the ID
// is kept in its place until resolveAssignedTopics looks it up.
const unnamedTopic = "\x00id:"

func consumerGroup(rg *kmsg.ConsumerGroupDescribeResponseGroup) *groupDescription {
	d := &groupDescription{
		Group:        rg.Group,
		Type:         "consumer",
		State:        rg.State,
		ProtocolType: "consumer",
		Protocol:     rg.AssignorName,
		Members:      []groupMember{},
	}
	for _, rm := range rg.Members {
		m := groupMember{
			MemberID:   rm.MemberID,
			InstanceID: rm.InstanceID,
			ClientID:   rm.ClientID,
			Host:       rm.ClientHost,
			Assignment: []topicPartitions{},
		}
		for _, a := range rm.Assignment.TopicPartitions {
			name := a.Topic
			if name == "" {
				name = unnamedTopic + topicIDString(a.TopicID)
			}
			m.Assignment = append(m.Assignment, topicPartitions{Topic: name, Partitions: a.Partitions})
		}
		d.subscribed = append(d.subscribed, rm.SubscribedTopics...)
		d.Members = append(d.Members, m)
	}
	return d
}

// resolveAssignedTopics names the topics assignments carry by ID only. An ID
// no longer in the metadata (the topic was deleted) stays as its string form.
func resolveAssignedTopics(ctx context.Context, adm *kadm.Client, ds map[string]*groupDescription) error {
	var names map[string]string
	for _, d := range ds {
		for i := range d.Members {
			as := d.Members[i].Assignment
			for j := range as {
				id, ok := strings.CutPrefix(as[j].Topic, unnamedTopic)
				if !ok {
					continue
				}
				if names == nil {
					tds, err := adm.ListTopicsWithInternal(ctx)
					if err != nil {
						return err
					}
					names = map[string]string{}
					for _, td := range tds {
						names[topicIDString(td.ID)] = td.Topic
					}
				}
				as[j].Topic = cmp.Or(names[id], id)
			}
			sortAssignment(as)
		}
	}
	return nil
}

// classicGroup converts a DescribeGroups answer. Assignments are readable
// only for the "consumer" protocol type and only once the group is Stable.
func classicGroup(dg kadm.DescribedGroup) *groupDescription {
	d := &groupDescription{
		Group:        dg.Group,
		Type:         "classic",
		State:        dg.State,
		ProtocolType: dg.ProtocolType,
		Protocol:     dg.Protocol,
		Members:      []groupMember{},
		err:          dg.Err,
		errMessage:   dg.ErrMessage,
	}
	if d.err == nil && dg.State == "Dead" {
		// Before DescribeGroups v6 a missing group is described as Dead.
		d.err = kerr.GroupIDNotFound
	}
	for _, dm := range dg.Members {
		m := groupMember{
			MemberID:   dm.MemberID,
			InstanceID: dm.InstanceID,
			ClientID:   dm.ClientID,
			Host:       dm.ClientHost,
			Assignment: []topicPartitions{},
		}
		if a, ok := dm.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				m.Assignment = append(m.Assignment, topicPartitions{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		sortAssignment(m.Assignment)
		if j, ok := dm.Join.AsConsumer(); ok {
			d.subscribed = append(d.subscribed, j.Topics...)
		}
		d.Members = append(d.Members, m)
	}
	return d
}

func sortAssignment(as []topicPartitions) {
	slices.SortFunc(as, func(a, b topicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
	for i := range as {
		as[i].Partitions = slices.Sorted(slices.Values(as[i].Partitions))
	}
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// loadOffsets fills the per-partition offsets and lag: the group's commits
// (OffsetFetch) against the log end offsets (ListOffsets) of every topic the
// group has committed to, is assigned or subscribes to.
func (d *groupDescription) loadOffsets(ctx context.Context, adm *kadm.Client) error {
	commits, err := adm.FetchOffsets(ctx, d.Group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return err
	}
	owner := map[tp]string{}
	topics := map[string]bool{}
	for _, m := range d.Members {
		for _, a := range m.Assignment {
			topics[a.Topic] = true
			for _, p := range a.Partitions {
				owner[tp{a.Topic, p}] = m.MemberID
			}
		}
	}
	for _, t := range d.subscribed {
		topics[t] = true
	}
	commits.Each(func(o kadm.OffsetResponse) { topics[o.Topic] = true })
	d.Offsets = []partitionLag{}
	if len(topics) == 0 {
		return nil
	}
	ends, listErr := adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(topics))...)
	if _, partial := errors.AsType[*kadm.ShardErrors](listErr); listErr != nil && !partial {
		return listErr
	}

	rows := map[tp]*partitionLag{}
	row := func(t string, p int32) *partitionLag {
		r := rows[tp{t, p}]
		if r == nil {
			r = &partitionLag{Topic: t, Partition: p}
			rows[tp{t, p}] = r
		}
		return r
	}
	ends.Each(func(lo kadm.ListedOffset) {
		if lo.Partition < 0 {
			return // kadm's marker for a topic that does not exist
		}
		r := row(lo.Topic, lo.Partition)
		if lo.Err != nil {
			r.Error = kafkaReason(lo.Err, "")
			return
		}
		r.LogEndOffset = &lo.Offset
	})
	commits.Each(func(o kadm.OffsetResponse) {
		r := row(o.Topic, o.Partition)
		switch {
		case o.Err != nil:
			r.Error = kafkaReason(o.Err, "")
		case o.At >= 0:
			r.CommittedOffset = &o.At
		}
	})
	for k, m := range owner {
		row(k.topic, k.partition).MemberID = m
	}
	for _, r := range rows {
		if r.LogEndOffset == nil && r.Error == "" {
			r.Error = endOffsetErr(ends, r.Topic, listErr)
		}
		if r.LogEndOffset != nil && r.CommittedOffset != nil {
			lag := *r.LogEndOffset - *r.CommittedOffset
			r.Lag = &lag
			d.TotalLag += max(lag, 0)
		}
		d.Offsets = append(d.Offsets, *r)
	}
	slices.SortFunc(d.Offsets, func(a, b partitionLag) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return nil
}

// endOffsetErr says why a partition has no log end offset.
func endOffsetErr(ends kadm.ListedOffsets, topic string, listErr error) string {
	if marker, ok := ends.Lookup(topic, -1); ok && marker.Err != nil {
		return kafkaReason(marker.Err, "")
	}
	if listErr != nil {
		return kafkaReason(listErr, "")
	}
	return "no log end offset in the ListOffsets answer"
}

func printGroup(out io.Writer, d *groupDescription) error {
	protocol := "-"
	if d.ProtocolType != "" || d.Protocol != "" {
		protocol = dashIfEmpty(d.ProtocolType) + "/" + dashIfEmpty(d.Protocol)
	}
	fmt.Fprintf(out, "Group: %s\tType: %s\tState: %s\tProtocol: %s\tMembers: %d\tLag: %d\n",
		d.Group, d.Type, dashIfEmpty(d.State), protocol, len(d.Members), d.TotalLag)
	if len(d.Members) > 0 {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER-ID\tINSTANCE-ID\tCLIENT-ID\tHOST\tASSIGNMENT")
		for _, m := range d.Members {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.MemberID, dashIfEmpty(derefString(m.InstanceID)),
				dashIfEmpty(m.ClientID), dashIfEmpty(m.Host), formatAssignment(m.Assignment))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(d.Offsets) == 0 {
		fmt.Fprintln(out, "Offsets: (none)")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID\tERROR")
	for _, o := range d.Offsets {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", o.Topic, o.Partition, offsetOrDash(o.CommittedOffset),
			offsetOrDash(o.LogEndOffset), offsetOrDash(o.Lag), dashIfEmpty(o.MemberID), dashIfEmpty(o.Error))
	}
	return tw.Flush()
}

// formatAssignment prints an assignment the way --topic takes partitions:
// "orders:0,1 audit:2".
func formatAssignment(as []topicPartitions) string {
	if len(as) == 0 {
		return "-"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Topic + ":" + joinIDs(a.Partitions)
	}
	return strings.Join(parts, " ")
}

func offsetOrDash(o *int64) string {
	if o == nil {
		return "-"
	}
	return strconv.FormatInt(*o, 10)
}

// resetKind is the reset-offsets mode.
type resetKind int

const (
	resetToEarliest resetKind = iota
	resetToLatest
	resetToDatetime
	resetToOffset
	resetShiftBy
)

// resetSpec is a parsed reset mode. value is the Unix millisecond for
// resetToDatetime, the offset for resetToOffset and the shift for
// resetShiftBy.
type resetSpec struct {
	kind  resetKind
	value int64
}

// resetFlags are the flags of group reset-offsets.
type resetFlags struct {
	topics     []string
	allTopics  bool
	toEarliest bool
	toLatest   bool
	toDatetime string
	toOffset   int64
	shiftBy    int64
	execute    bool
	dryRun     bool
	json       bool
}

// resetRow is one partition of a reset plan; CurrentOffset is null where
// the group has no commit.
type resetRow struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	NewOffset     int64  `json:"new_offset"`
}

func newGroupResetOffsets(conn *connection) *cobra.Command {
	var rf resetFlags
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP (--topic T[:P,P...]... | --all-topics) MODE [--execute]",
		Short: "Move the committed offsets (share groups: start offsets) of an inactive group",
		Long: `Move the committed offsets of a group. MODE is exactly one of --to-earliest,
--to-latest, --to-datetime, --to-offset or --shift-by. Targets outside the log
are clamped to its start or end, with a warning. --all-topics takes every
partition the group has committed to.

Without --execute this is a dry run: it prints the plan and commits nothing.
--execute commits it, which Kafka allows only while the group has no active
members (state Empty or Dead): stop the consumers first.

For a share group (KIP-932) the offsets moved are the share-partitions'
start offsets, set with AlterShareGroupOffsets as kafka-share-groups.sh
--reset-offsets does: CURRENT-OFFSET is the start offset, --all-topics takes
every partition with one, and the group must be Empty (no share consumers).
The in-flight records of a partition are dropped with its old start offset.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResetOffsets(cmd, conn, &rf, args[0])
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&rf.topics, "topic", nil, "topic to reset, all its partitions or only T:P,P (repeatable)")
	f.BoolVar(&rf.allTopics, "all-topics", false, "reset every partition the group has committed to")
	f.BoolVar(&rf.toEarliest, "to-earliest", false, "move to the log start offset")
	f.BoolVar(&rf.toLatest, "to-latest", false, "move to the log end offset")
	f.StringVar(&rf.toDatetime, "to-datetime", "", "move to the first offset at or after this time (RFC 3339 or Unix milliseconds)")
	f.Int64Var(&rf.toOffset, "to-offset", 0, "move to this offset")
	f.Int64Var(&rf.shiftBy, "shift-by", 0, "move the committed offset by this many records (negative: back)")
	f.BoolVar(&rf.execute, "execute", false, "commit the new offsets (default: dry run)")
	f.BoolVar(&rf.dryRun, "dry-run", false, "only print the plan (the default)")
	f.BoolVar(&rf.json, "json", false, "print the plan as a JSON array instead of a table")
	return cmd
}

// spec picks the one reset mode given.
func (rf *resetFlags) spec(cmd *cobra.Command) (resetSpec, error) {
	var specs []resetSpec
	if rf.toEarliest {
		specs = append(specs, resetSpec{kind: resetToEarliest})
	}
	if rf.toLatest {
		specs = append(specs, resetSpec{kind: resetToLatest})
	}
	f := cmd.Flags()
	if f.Changed("to-datetime") {
		ms, err := parseDatetime(rf.toDatetime)
		if err != nil {
			return resetSpec{}, err
		}
		specs = append(specs, resetSpec{kind: resetToDatetime, value: ms})
	}
	if f.Changed("to-offset") {
		if rf.toOffset < 0 {
			return resetSpec{}, fmt.Errorf("invalid --to-offset %d: must not be negative", rf.toOffset)
		}
		specs = append(specs, resetSpec{kind: resetToOffset, value: rf.toOffset})
	}
	if f.Changed("shift-by") {
		specs = append(specs, resetSpec{kind: resetShiftBy, value: rf.shiftBy})
	}
	if len(specs) != 1 {
		return resetSpec{}, errors.New("give exactly one of --to-earliest, --to-latest, --to-datetime, --to-offset or --shift-by")
	}
	return specs[0], nil
}

func parseDatetime(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("invalid --to-datetime %q: must not be negative", s)
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("invalid --to-datetime %q: want RFC 3339 (2006-01-02T15:04:05Z) or Unix milliseconds", s)
	}
	return t.UnixMilli(), nil
}

// parseTopicSpecs reads --topic values: "T" (nil partitions: all of them)
// or "T:P,P". A topic given whole and in part is reset whole.
func parseTopicSpecs(specs []string) (map[string][]int32, error) {
	out := map[string][]int32{}
	for _, s := range specs {
		topic, list, hasList := strings.Cut(s, ":")
		if topic == "" || hasList && list == "" {
			return nil, fmt.Errorf("invalid --topic %q: want TOPIC or TOPIC:P,P", s)
		}
		whole, seen := out[topic]
		if seen && whole == nil || !hasList {
			out[topic] = nil
			continue
		}
		ps := out[topic]
		for _, f := range strings.Split(list, ",") {
			p, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil || p < 0 {
				return nil, fmt.Errorf("invalid --topic %q: partition %q is not a non-negative integer", s, f)
			}
			if !slices.Contains(ps, int32(p)) {
				ps = append(ps, int32(p))
			}
		}
		out[topic] = ps
	}
	return out, nil
}

// resetTarget is where spec moves a partition whose log spans [start, end]:
// committed is the group's offset there (-1 for none), atTime the first
// offset at or after --to-datetime. As in Kafka's ConsumerGroupCommand, a
// target outside the log is clamped to it; wanted is the target before
// clamping, so the caller can warn.
func resetTarget(s resetSpec, committed, start, end, atTime int64) (offset, wanted int64, err error) {
	switch s.kind {
	case resetToEarliest:
		wanted = start
	case resetToLatest:
		wanted = end
	case resetToDatetime:
		wanted = atTime
	case resetToOffset:
		wanted = s.value
	case resetShiftBy:
		if committed < 0 {
			return 0, 0, errors.New("no committed offset to shift")
		}
		wanted = addClamped(committed, s.value)
	}
	return min(max(wanted, start), end), wanted, nil
}

// addClamped is a+b saturated at the int64 limits.
func addClamped(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

func runResetOffsets(cmd *cobra.Command, conn *connection, rf *resetFlags, group string) error {
	spec, err := rf.spec(cmd)
	if err != nil {
		return err
	}
	topics, err := parseTopicSpecs(rf.topics)
	if err != nil {
		return err
	}
	switch {
	case len(topics) == 0 && !rf.allTopics:
		return errors.New("nothing to reset: give --topic or --all-topics")
	case len(topics) > 0 && rf.allTopics:
		return errors.New("--topic and --all-topics cannot be used together")
	case rf.execute && rf.dryRun:
		return errors.New("--execute and --dry-run cannot be used together")
	}
	cl, err := conn.client(cmd)
	if err != nil {
		return err
	}
	adm := conn.adminFor(cl)
	defer adm.Close()
	ctx, cancel := conn.opContext(cmd.Context())
	defer cancel()

	typ, err := checkInactive(ctx, cl, adm, group)
	if err != nil {
		if rf.execute || !errors.Is(err, errActiveGroup) {
			return groupRequestErr(cmd, conn, group, err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v; --execute will be refused until they leave\n", err)
	}
	share := typ == "share"
	var commits kadm.OffsetResponses
	if share {
		commits, err = shareStartOffsets(ctx, adm, group)
	} else {
		commits, err = adm.FetchOffsets(ctx, group)
	}
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return groupRequestErr(cmd, conn, group, err)
	}
	if rf.allTopics {
		if topics = committedPartitions(commits); len(topics) == 0 && share {
			return fmt.Errorf("share group %q has no start offsets to reset (no member has fetched yet); name topics with --topic", group)
		} else if len(topics) == 0 {
			return fmt.Errorf("group %q has no committed offsets to reset; name topics with --topic", group)
		}
	}
	warn := func(msg string) { fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", msg) }
	rows, err := planReset(ctx, adm, topics, spec, commits, warn)
	if err != nil {
		return conn.reachErr(cmd, err)
	}
	if err := printResetPlan(cmd.OutOrStdout(), rows, rf.json); err != nil {
		return err
	}
	if !rf.execute {
		fmt.Fprintf(cmd.ErrOrStderr(), "dry run: nothing committed; add --execute to commit these offsets\n")
		return nil
	}
	if share {
		if err := commitShareReset(ctx, adm, group, rows); err != nil {
			return groupRequestErr(cmd, conn, group, err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "set new start offsets for %d partitions of share group %q\n", len(rows), group)
		return nil
	}
	if err := commitReset(ctx, adm, group, rows); err != nil {
		return groupRequestErr(cmd, conn, group, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "committed new offsets for %d partitions of group %q\n", len(rows), group)
	return nil
}

// errActiveGroup marks a refusal to reset a group that has members.
var errActiveGroup = errors.New("has active members")

// checkInactive fails unless the group is Empty or Dead (or does not exist
// yet), the states in which Kafka accepts offset commits from outside it.
// It answers the group's type ("" for none yet), also when it fails with
// errActiveGroup.
func checkInactive(ctx context.Context, cl *kgo.Client, adm *kadm.Client, group string) (string, error) {
	ds, err := describeGroups(ctx, cl, adm, []string{group})
	if err != nil {
		return "", err
	}
	d := ds[group]
	switch {
	case errors.Is(d.err, kerr.GroupIDNotFound):
		return "", nil
	case d.err != nil:
		return "", groupErr(group, d.err, d.errMessage)
	case d.State == "Empty" || d.State == "Dead":
		return d.Type, nil
	}
	return d.Type, fmt.Errorf("group %q %w (state %s, members: %d)", group, errActiveGroup, d.State, len(d.Members))
}

// committedPartitions are the partitions with a commit, for --all-topics.
func committedPartitions(commits kadm.OffsetResponses) map[string][]int32 {
	out := map[string][]int32{}
	commits.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[o.Topic] = append(out[o.Topic], o.Partition)
		}
	})
	return out
}

// planReset lists the offsets the mode needs and computes the new offset of
// every partition named in topics (nil partitions: all of the topic's).
func planReset(ctx context.Context, adm *kadm.Client, topics map[string][]int32, spec resetSpec,
	commits kadm.OffsetResponses, warn func(string)) ([]resetRow, error) {
	var parts []tp
	names := slices.Sorted(maps.Keys(topics))
	for _, t := range names {
		td, err := topicMetadata(ctx, adm, t)
		if err != nil {
			return nil, err
		}
		ps := topics[t]
		if ps == nil {
			ps = td.Partitions.Numbers()
		}
		for _, p := range ps {
			if err := checkPartition(td, p); err != nil {
				return nil, err
			}
			parts = append(parts, tp{t, p})
		}
	}
	slices.SortFunc(parts, func(a, b tp) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, err
	}
	var byTime kadm.ListedOffsets
	if spec.kind == resetToDatetime {
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, spec.value, names...); err != nil {
			return nil, err
		}
	}
	rows := make([]resetRow, 0, len(parts))
	for _, k := range parts {
		row, err := planPartition(k, spec, commits, starts, ends, byTime, warn)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func planPartition(k tp, spec resetSpec, commits kadm.OffsetResponses,
	starts, ends, byTime kadm.ListedOffsets, warn func(string)) (resetRow, error) {
	start, err := listedOffset(starts, k)
	if err != nil {
		return resetRow{}, err
	}
	end, err := listedOffset(ends, k)
	if err != nil {
		return resetRow{}, err
	}
	atTime := int64(-1)
	if byTime != nil {
		if atTime, err = listedOffset(byTime, k); err != nil {
			return resetRow{}, err
		}
	}
	row := resetRow{Topic: k.topic, Partition: k.partition}
	committed := int64(-1)
	if o, ok := commits.Lookup(k.topic, k.partition); ok && o.Err == nil && o.At >= 0 {
		committed = o.At
		row.CurrentOffset = &committed
	}
	offset, wanted, err := resetTarget(spec, committed, start, end, atTime)
	if err != nil {
		return resetRow{}, fmt.Errorf("topic %q partition %d: %v", k.topic, k.partition, err)
	}
	if wanted != offset {
		warn(fmt.Sprintf("topic %q partition %d: offset %d is outside the log [%d, %d]; using %d",
			k.topic, k.partition, wanted, start, end, offset))
	}
	row.NewOffset = offset
	return row, nil
}

func listedOffset(l kadm.ListedOffsets, k tp) (int64, error) {
	lo, ok := l.Lookup(k.topic, k.partition)
	if !ok {
		return 0, fmt.Errorf("topic %q partition %d: no offset in the ListOffsets answer", k.topic, k.partition)
	}
	if lo.Err != nil {
		return 0, topicErr(k.topic, lo.Err, "")
	}
	return lo.Offset, nil
}

func printResetPlan(out io.Writer, rows []resetRow, asJSON bool) error {
	if asJSON {
		return writeJSON(out, rows)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURRENT-OFFSET\tNEW-OFFSET")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\n", r.Topic, r.Partition, offsetOrDash(r.CurrentOffset), r.NewOffset)
	}
	return tw.Flush()
}

// commitReset commits the plan as an admin commit (no member, generation -1).
// The broker refuses that while the group has members; checkInactive asked
// first, but a consumer may have joined since.
func commitReset(ctx context.Context, adm *kadm.Client, group string, rows []resetRow) error {
	var offsets kadm.Offsets
	for _, r := range rows {
		offsets.AddOffset(r.Topic, r.Partition, r.NewOffset, -1)
	}
	resps, err := adm.CommitOffsets(ctx, group, offsets)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range resps.Sorted() {
		switch {
		case o.Err == nil:
		case errors.Is(o.Err, kerr.UnknownMemberID), errors.Is(o.Err, kerr.IllegalGeneration),
			errors.Is(o.Err, kerr.RebalanceInProgress), errors.Is(o.Err, kerr.StaleMemberEpoch),
			errors.Is(o.Err, kerr.FencedMemberEpoch):
			return fmt.Errorf("group %q %w: stop its consumers before resetting offsets", group, errActiveGroup)
		default:
			errs = append(errs, fmt.Errorf("group %q: commit topic %q partition %d: %s",
				group, o.Topic, o.Partition, kafkaReason(o.Err, "")))
		}
	}
	return joinErrors(errs)
}

func newGroupDelete(conn *connection) *cobra.Command {
	return &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete groups that have no active members, with their committed offsets (share groups: their share state)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			groups := uniq(args)
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			resps, err := adm.DeleteGroups(ctx, groups...)
			if err != nil && len(resps) == 0 {
				return conn.reachErr(cmd, err)
			}
			out := cmd.OutOrStdout()
			var errs []error
			for _, g := range groups {
				r, ok := resps[g]
				switch {
				case !ok:
					errs = append(errs, fmt.Errorf("group %q: %v", g, cmp.Or(conn.reachErr(cmd, err), errors.New("no answer from the cluster"))))
				case r.Err != nil:
					errs = append(errs, groupErr(g, r.Err, r.ErrMessage))
				default:
					fmt.Fprintf(out, "deleted group %q\n", g)
				}
			}
			return joinErrors(errs)
		},
	}
}
