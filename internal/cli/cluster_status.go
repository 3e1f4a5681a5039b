package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/model"
)

// clusterStatus is the JSON form of cluster status. Controller is the
// leader of the metadata quorum, -1 when unknown; LeaderEpoch and
// HighWatermark are -1 when the quorum could not be described (QuorumError
// says why).
type clusterStatus struct {
	ClusterID     string       `json:"cluster_id"`
	Controller    int32        `json:"controller"`
	LeaderEpoch   int32        `json:"leader_epoch"`
	HighWatermark int64        `json:"high_watermark"`
	QuorumError   string       `json:"quorum_error,omitempty"`
	Nodes         []nodeStatus `json:"nodes"`
	// Balancer is the active controller's balancer, read from GET
	// /v1/balancer of the --http addresses; BalancerError says why it
	// could not be (nil and "" without --http).
	Balancer      *balance.Status `json:"balancer,omitempty"`
	BalancerError string          `json:"balancer_error,omitempty"`
}

// Node states: what DescribeCluster says of a node.
const (
	nodeLive    = "live"     // listed unfenced: clients may use it
	nodeFenced  = "fenced"   // registered, listed with IsFenced (DescribeCluster v2)
	nodeNotLive = "not-live" // in the quorum, not listed, and the cluster cannot list fenced brokers
	nodeAbsent  = "unregistered"
)

// nodeStatus is one node: a broker, a quorum member, or both. Endpoint is
// empty and Rack null for a node the cluster lists no broker for. The
// quorum figures are null for a node outside the quorum or unknown to its
// leader: Lag is the leader's high watermark minus the node's log end
// offset, the ...MsAgo fields count back from this command's clock.
type nodeStatus struct {
	NodeID            int32   `json:"node_id"`
	State             string  `json:"state"`
	Endpoint          string  `json:"endpoint"`
	Rack              *string `json:"rack"`
	QuorumRole        string  `json:"quorum_role"` // leader, voter, observer, or "" for none
	LogEndOffset      *int64  `json:"log_end_offset"`
	Lag               *int64  `json:"lag"`
	LastFetchMsAgo    *int64  `json:"last_fetch_ms_ago"`
	LastCaughtUpMsAgo *int64  `json:"last_caught_up_ms_ago"`
}

func newClusterStatus(conn *connection) *cobra.Command {
	var (
		asJSON    bool
		httpAddrs []string
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every node: live or fenced, its rack, its part in the metadata quorum and how far behind it is",
		Long: `Show every node of the cluster: whether it is live or fenced, its endpoint and
rack, the active controller, and each node's place in the metadata quorum
with its lag, as kafka-metadata-quorum.sh describe --status and --replication
do.

The brokers and their state come from DescribeCluster: "live" brokers are the
ones Metadata lists, which clients use. "fenced" brokers are registered with
the controller but may not lead or serve: their heartbeats stopped for
broker.session.timeout.ms, they have not caught up with the metadata since
registering, or they are shutting down. Only DescribeCluster v2 (Kafka 4.0,
KIP-1073) lists fenced brokers; against an older cluster a quorum member that
is not listed shows as "not-live" (fenced or not registered).
"unregistered" is a quorum member the cluster lists no broker for.

The quorum comes from DescribeQuorum on __cluster_metadata: the leader (the
active controller) and its epoch, its high watermark, and each voter's and
observer's log end offset as the leader last heard it; LAG is the high
watermark minus that offset, LAST-FETCH and LAST-CAUGHT-UP how long ago the
leader last heard from the node and last knew it caught up. On Samsa the
offsets are metadata offsets (Raft indexes) and a node's is what its last
broker heartbeat reported. When the quorum cannot be described, the brokers
are still shown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := conn.client(cmd)
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			dc, err := describeClusterWithFenced(ctx, cl)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			dq, qerr := describeQuorum(ctx, cl)
			st := buildClusterStatus(dc, dq, qerr, conn.clock.Now())
			if len(httpAddrs) > 0 {
				st.Balancer, err = readBalancer(ctx, httpAddrs)
				if err != nil {
					st.BalancerError = err.Error()
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, st)
			}
			return printClusterStatus(out, st)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	cmd.Flags().StringSliceVar(&httpAddrs, "http", nil, "host:port of nodes' HTTP listeners (samsa.http.listener), to show the balancer's state")
	return cmd
}

// readBalancer asks each address for GET /v1/balancer and returns the
// active controller's answer; when none of them is the active controller,
// the error names the one they report.
func readBalancer(ctx context.Context, addrs []string) (*balance.Status, error) {
	cl := &http.Client{Timeout: 5 * time.Second}
	var errs []error
	controller := int32(-1)
	for _, addr := range addrs {
		st, err := getBalancer(ctx, cl, addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
			continue
		}
		if st.Active {
			return st, nil
		}
		controller = int32(st.ControllerID)
	}
	if controller >= 0 {
		errs = append(errs, fmt.Errorf("none of the addresses is the active controller (node %d): give its HTTP address", controller))
	}
	return nil, errors.Join(errs...)
}

func getBalancer(ctx context.Context, cl *http.Client, addr string) (*balance.Status, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/balancer", nil)
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
	var st balance.Status
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&st); err != nil {
		return nil, fmt.Errorf("reading the balancer's state: %w", err)
	}
	return &st, nil
}

// describeClusterWithFenced asks for every registered broker, fenced ones
// included where the cluster can say (v2).
func describeClusterWithFenced(ctx context.Context, cl *kgo.Client) (*kmsg.DescribeClusterResponse, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.EndpointType = 1
	req.IncludeFencedBrokers = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, errors.New(kafkaReason(err, derefString(resp.ErrorMessage)))
	}
	return resp, nil
}

// describeQuorum describes the metadata quorum; an error says why it could
// not be, for the status to show beside the brokers.
func describeQuorum(ctx context.Context, cl *kgo.Client) (*kmsg.DescribeQuorumResponseTopicPartition, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, errors.New(kafkaReason(err, derefString(resp.ErrorMessage)))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, errors.New("the answer names no metadata partition")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, errors.New(kafkaReason(err, derefString(p.ErrorMessage)))
	}
	return &p, nil
}

// buildClusterStatus joins the brokers and the quorum, node by node.
func buildClusterStatus(dc *kmsg.DescribeClusterResponse, q *kmsg.DescribeQuorumResponseTopicPartition, qerr error, now time.Time) clusterStatus {
	st := clusterStatus{ClusterID: dc.ClusterID, Controller: -1, LeaderEpoch: -1, HighWatermark: -1, Nodes: []nodeStatus{}}
	byID := map[int32]*nodeStatus{}
	node := func(id int32) *nodeStatus {
		if n, ok := byID[id]; ok {
			return n
		}
		n := &nodeStatus{NodeID: id, State: nodeAbsent}
		byID[id] = n
		return n
	}
	for _, b := range dc.Brokers {
		n := node(b.NodeID)
		n.State = nodeLive
		if b.IsFenced {
			n.State = nodeFenced
		}
		if b.Host != "" {
			n.Endpoint = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
		n.Rack = b.Rack
	}
	absent := nodeAbsent
	if dc.Version < 2 {
		absent = nodeNotLive
	}
	if qerr != nil {
		st.QuorumError = qerr.Error()
	}
	if q != nil {
		st.Controller, st.LeaderEpoch, st.HighWatermark = q.LeaderID, q.LeaderEpoch, q.HighWatermark
		add := func(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, role string) {
			for _, r := range rs {
				n := node(r.ReplicaID)
				if n.State == nodeAbsent {
					n.State = absent
				}
				n.QuorumRole = role
				if r.ReplicaID == q.LeaderID {
					n.QuorumRole = "leader"
				}
				if r.LogEndOffset >= 0 {
					n.LogEndOffset = new(r.LogEndOffset)
					if q.HighWatermark >= 0 {
						n.Lag = new(max(q.HighWatermark-r.LogEndOffset, 0))
					}
				}
				n.LastFetchMsAgo = msAgo(r.LastFetchTimestamp, now)
				n.LastCaughtUpMsAgo = msAgo(r.LastCaughtUpTimestamp, now)
			}
		}
		add(q.CurrentVoters, "voter")
		add(q.Observers, "observer")
	}
	for _, n := range byID {
		st.Nodes = append(st.Nodes, *n)
	}
	slices.SortFunc(st.Nodes, func(a, b nodeStatus) int { return int(a.NodeID) - int(b.NodeID) })
	return st
}

// msAgo is how long before now a Kafka wall-clock timestamp was; nil when
// unknown (-1). A timestamp ahead of this clock counts as now.
func msAgo(ts int64, now time.Time) *int64 {
	if ts < 0 {
		return nil
	}
	return new(max(now.UnixMilli()-ts, 0))
}

func printClusterStatus(out io.Writer, st clusterStatus) error {
	fmt.Fprintf(out, "Cluster ID: %s\n", dashIfEmpty(st.ClusterID))
	if st.QuorumError != "" {
		fmt.Fprintf(out, "Controller: - (metadata quorum not described: %s)\n", st.QuorumError)
	} else {
		fmt.Fprintf(out, "Controller: %s (metadata quorum leader, epoch %d, high watermark %d)\n",
			nodeOrDash(st.Controller), st.LeaderEpoch, st.HighWatermark)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tENDPOINT\tRACK\tQUORUM\tLOG-END-OFFSET\tLAG\tLAST-FETCH\tLAST-CAUGHT-UP")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.NodeID, n.State, dashIfEmpty(n.Endpoint),
			dashIfEmpty(derefString(n.Rack)), dashIfEmpty(n.QuorumRole), offsetOrDash(n.LogEndOffset), offsetOrDash(n.Lag),
			agoOrDash(n.LastFetchMsAgo), agoOrDash(n.LastCaughtUpMsAgo))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case st.BalancerError != "":
		_, err := fmt.Fprintf(out, "\nBalancer: - (not read: %s)\n", st.BalancerError)
		return err
	case st.Balancer != nil:
		return printBalancer(out, st.Balancer)
	}
	return nil
}

// printBalancer writes the balancer's section: its state, the moves in
// progress, its last decisions and notes, and the brokers' loads.
func printBalancer(out io.Writer, b *balance.Status) error {
	on := "off (samsa.balancer.enable=false)"
	if b.Enabled {
		on = "on"
	}
	fmt.Fprintf(out, "\nBalancer: %s, %s (on node %d; last plan %s)\n", on, b.State, b.NodeID, dashIfEmpty(b.LastPlan))
	switch {
	case b.Throttle == 0:
		fmt.Fprintln(out, "Throttle: none (samsa.balancer.throttle.bytes.per.second=0)")
	default:
		fmt.Fprintf(out, "Throttle: %d B/s per broker of a move\n", b.Throttle)
	}
	fmt.Fprintf(out, "Moves: %d started, %d completed, %d cancelled; %d preferred-leader elections\n",
		b.MovesStarted, b.MovesCompleted, b.MovesCancelled, b.LeaderElections)
	if b.SizesNote != "" {
		fmt.Fprintf(out, "Sizes: %s\n", b.SizesNote)
	}
	if len(b.Brokers) > 0 {
		after := map[model.NodeID]balance.BrokerLoad{}
		for _, l := range b.After {
			after[l.Broker] = l
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BROKER\tSTATE\tREPLICAS\tLEADERS\tBYTES")
		for _, l := range b.Brokers {
			a, ok := after[l.Broker]
			if !ok {
				a = l
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", l.Broker, l.State, arrow(l.Replicas, a.Replicas), arrow(l.Leaders, a.Leaders), arrow(l.Bytes, a.Bytes))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	section := func(title string, ms []balance.StatusMove) {
		if len(ms) == 0 {
			return
		}
		fmt.Fprintf(out, "%s:\n", title)
		for _, m := range ms {
			line := fmt.Sprintf("  %s-%d", m.Topic, m.Partition)
			if m.Kind != "" {
				line += " " + m.Kind
			}
			line += fmt.Sprintf(" %v -> %v", m.From, m.To)
			if len(m.Adding) > 0 || len(m.Removing) > 0 {
				line += fmt.Sprintf(" (adding %v, removing %v)", m.Adding, m.Removing)
			}
			if m.Reason != "" {
				line += ": " + m.Reason
			}
			fmt.Fprintln(out, line)
		}
	}
	section("In progress", b.InProgress)
	section("Last decisions", b.Moves)
	if len(b.Notes) > 0 {
		fmt.Fprintln(out, "Not done:")
		for _, n := range b.Notes {
			fmt.Fprintf(out, "  %s\n", n)
		}
	}
	return nil
}

// arrow prints a value, or "before -> after" when it changes.
func arrow[T comparable](before, after T) string {
	if before == after {
		return fmt.Sprint(before)
	}
	return fmt.Sprintf("%v -> %v", before, after)
}

// agoOrDash prints a duration back from now as "1.5s ago", "-" when unknown.
func agoOrDash(ms *int64) string {
	if ms == nil {
		return "-"
	}
	d := time.Duration(*ms) * time.Millisecond
	if d < time.Second {
		return d.String() + " ago"
	}
	return d.Round(100*time.Millisecond).String() + " ago"
}
