package cli

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

func newClusterCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Describe the cluster (its ID, controller, brokers and metadata quorum), balance it, and change the quorum's voters",
	}
	conn.register(cmd)
	cmd.AddCommand(newClusterInfo(&conn), newClusterStatus(&conn), newClusterRebalance(&conn), newClusterReassign(&conn),
		newClusterAddBroker(&conn), newClusterDecommission(&conn),
		newClusterAddController(&conn), newClusterRemoveController(&conn))
	RejectUnknownSubcommands(cmd)
	return cmd
}

// clusterInfo is the JSON form of cluster info. Rack is null for a broker
// without broker.rack.
type clusterInfo struct {
	ClusterID  string          `json:"cluster_id"`
	Controller int32           `json:"controller"` // -1: unknown
	Brokers    []clusterBroker `json:"brokers"`
}

type clusterBroker struct {
	NodeID int32   `json:"node_id"`
	Host   string  `json:"host"`
	Port   int32   `json:"port"`
	Rack   *string `json:"rack"`
}

func newClusterInfo(conn *connection) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show the cluster ID, the controller and every broker with its endpoint and rack",
		Long: `Show the cluster ID, the controller and every broker with its endpoint and
rack, as rpk cluster info does (Metadata). A broker's endpoint is the one it
advertises on the listener this command reached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := conn.admin(cmd)
			if err != nil {
				return err
			}
			defer adm.Close()
			ctx, cancel := conn.opContext(cmd.Context())
			defer cancel()
			md, err := adm.BrokerMetadata(ctx)
			if err != nil {
				return conn.reachErr(cmd, err)
			}
			info := describeCluster(md)
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, info)
			}
			return printClusterInfo(out, info)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	return cmd
}

func describeCluster(md kadm.Metadata) clusterInfo {
	info := clusterInfo{ClusterID: md.Cluster, Controller: md.Controller, Brokers: []clusterBroker{}}
	for _, b := range md.Brokers { // kadm sorts them by node ID
		info.Brokers = append(info.Brokers, clusterBroker{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	return info
}

func printClusterInfo(out io.Writer, info clusterInfo) error {
	fmt.Fprintf(out, "Cluster ID: %s\nController: %s\n", dashIfEmpty(info.ClusterID), nodeOrDash(info.Controller))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BROKER\tENDPOINT\tRACK")
	for _, b := range info.Brokers {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", b.NodeID, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), dashIfEmpty(derefString(b.Rack)))
	}
	return tw.Flush()
}

func nodeOrDash(id int32) string {
	if id < 0 {
		return "-"
	}
	return strconv.Itoa(int(id))
}
