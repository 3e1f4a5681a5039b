package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/samsa-io/samsa/internal/cli"
	"github.com/samsa-io/samsa/internal/devcluster"
)

const (
	maxDevNodes     = 9
	devStartTimeout = 60 * time.Second
	devStopTimeout  = 30 * time.Second
)

func newDev() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Tools for development: a local multi-node cluster",
	}
	cmd.AddCommand(newDevCluster())
	cli.RejectUnknownSubcommands(cmd)
	return cmd
}

// devClusterOptions are samsa dev cluster's flags.
type devClusterOptions struct {
	nodes int
	// controllers, when not zero, makes nodes 1..controllers
	// controller-only and the rest broker-only (Kafka's isolated mode).
	controllers int
	basePort    int
	dir         string
	binary      string
	keep        bool
	connect     bool
	overrides   []string
}

func newDevCluster() *cobra.Command {
	var o devClusterOptions
	cmd := &cobra.Command{
		Use:   "cluster --nodes N",
		Short: "Run N combined nodes as separate processes on loopback until Ctrl-C",
		Long: `Run a local cluster for development and tests: N combined nodes (broker and
controller), each a samsa serve process with its own directory, config and log
file. Node i listens for clients on 127.0.0.1:(base+i-1) and for the quorum on
127.0.0.1:(base+100+i-1); every port is checked free first. With
--controllers K, nodes 1 to K are controller-only (the quorum's voters, no
Kafka listener) and the others broker-only (Raft non-voters), as Kafka runs
in production.

Replication defaults follow the number of brokers: default.replication.factor and the
internal topics' replication factor min(3, N), min.insync.replicas and
transaction.state.log.min.isr min(2, that), so topics created without a
replication factor are replicated. A dead broker is fenced after 3 s.

The command prints the bootstrap string and each node's ports, directory and
log, then waits. Ctrl-C (or SIGTERM) stops the nodes one by one with SIGTERM,
a controlled shutdown each, and reports each exit; a second Ctrl-C kills them.
Without --dir the cluster lives in a new temporary directory, removed on exit
unless --keep; a directory kept (or given) starts the same cluster again with
the same --nodes.

--connect runs a Kafka Connect worker in every broker node
(samsa.connect.listener on 127.0.0.1:(base+500+i-1)), all of one Connect
cluster (group connect-cluster): connectors created through any node's REST
API are spread over the nodes, and move when a node stops.`,
		Example: `  samsa dev cluster --nodes 3
  samsa topic create t -p 6 --bootstrap-server 127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDevCluster(ctx, stop, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.nodes, "nodes", "n", 3, fmt.Sprintf("how many nodes (1-%d)", maxDevNodes))
	f.IntVar(&o.controllers, "controllers", 0, "nodes 1 to this many are controller-only, the rest broker-only (0: every node is both)")
	f.IntVar(&o.basePort, "base-port", 19092, "node 1's Kafka port; the others count up, controller ports 100 above")
	f.StringVar(&o.dir, "dir", "", "the cluster's directory (default: a new temporary directory)")
	f.StringVar(&o.binary, "binary", "", "the samsa binary the nodes run (default: this one)")
	f.BoolVar(&o.keep, "keep", false, "keep the temporary directory on exit")
	f.BoolVar(&o.connect, "connect", false, "run a Kafka Connect worker in every broker node (off in samsa serve by default)")
	f.StringArrayVar(&o.overrides, "override", nil, "a broker config for every node, as name=value (repeatable)")
	return cmd
}

func (o devClusterOptions) validate() error {
	if o.nodes < 1 || o.nodes > maxDevNodes {
		return fmt.Errorf("--nodes %d: want 1 to %d", o.nodes, maxDevNodes)
	}
	if o.controllers < 0 || (o.controllers > 0 && o.controllers >= o.nodes) {
		return fmt.Errorf("--controllers %d: want 0 (every node combined) or 1 to %d, leaving a broker", o.controllers, o.nodes-1)
	}
	for _, ov := range o.overrides {
		if k, _, ok := strings.Cut(ov, "="); !ok || k == "" {
			return fmt.Errorf("--override %q: want name=value", ov)
		}
	}
	return nil
}

// roles is devcluster.Config.Roles for --controllers; nil: all combined.
func (o devClusterOptions) roles() func(int32) string {
	if o.controllers == 0 {
		return nil
	}
	return func(id int32) string {
		if int(id) <= o.controllers {
			return "controller"
		}
		return "broker"
	}
}

func (o devClusterOptions) overrideMap() map[string]string {
	out := map[string]string{}
	for _, ov := range o.overrides {
		k, v, _ := strings.Cut(ov, "=")
		out[k] = v
	}
	return out
}

// runDevCluster runs the cluster until ctx ends; unhook restores the
// default signal handling, so a second Ctrl-C during the shutdown kills
// this process and with it (Pdeathsig) the nodes.
func runDevCluster(ctx context.Context, unhook func(), o devClusterOptions, out io.Writer) error {
	binary, err := o.binaryPath()
	if err != nil {
		return err
	}
	dir, cleanup, err := o.directory(out)
	if err != nil {
		return err
	}
	c, err := devcluster.New(devcluster.Config{Binary: binary, Dir: dir, Nodes: o.nodes, BasePort: o.basePort,
		Overrides: o.overrideMap(), StopTimeout: devStopTimeout, Roles: o.roles(), Connect: o.connect})
	if err != nil {
		cleanup(false)
		return err
	}
	printSettings(out, o)
	startCtx, cancel := context.WithTimeout(ctx, devStartTimeout)
	err = c.Start(startCtx)
	cancel()
	if err != nil {
		fmt.Fprintf(out, "The cluster did not start: %v\nThe nodes' logs end with:\n%s\n", err, c.LogTails(15))
		stopNodes(out, c)
		cleanup(true) // its logs say why
		return fmt.Errorf("dev cluster: %w", err)
	}
	printCluster(out, c)
	<-ctx.Done()
	unhook()
	fmt.Fprintln(out, "\nStopping the nodes one by one (a second Ctrl-C kills them).")
	err = stopNodes(out, c)
	cleanup(err != nil)
	if err != nil {
		return fmt.Errorf("dev cluster: %w", err)
	}
	return nil
}

func (o devClusterOptions) binaryPath() (string, error) {
	if o.binary != "" {
		return o.binary, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("dev cluster: find this binary (give --binary): %w", err)
	}
	return self, nil
}

// directory is the cluster's directory and what to do with it at the end:
// a temporary one goes unless --keep or a failure (keep: its logs say
// what happened), a given one stays.
func (o devClusterOptions) directory(out io.Writer) (string, func(keep bool), error) {
	if o.dir != "" {
		return o.dir, func(bool) {}, nil
	}
	dir, err := os.MkdirTemp("", "samsa-dev-cluster-")
	if err != nil {
		return "", nil, fmt.Errorf("dev cluster: %w", err)
	}
	fmt.Fprintf(out, "Cluster directory: %s\n", dir)
	return dir, func(keep bool) {
		if o.keep || keep {
			fmt.Fprintf(out, "Kept %s: samsa dev cluster --nodes %d --dir %s starts this cluster again.\n", dir, o.nodes, dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(out, "Could not remove %s: %v\n", dir, err)
			return
		}
		fmt.Fprintf(out, "Removed %s.\n", dir)
	}, nil
}

// printSettings says what every node is given beyond its listeners.
func printSettings(out io.Writer, o devClusterOptions) {
	set := devcluster.ReplicationDefaults(o.nodes - o.controllers) // sized by the brokers
	maps.Copy(set, devcluster.FailureDetection)
	maps.Copy(set, o.overrideMap())
	fmt.Fprintf(out, "Starting %d nodes; every node's config sets:\n", o.nodes)
	for _, k := range slices.Sorted(maps.Keys(set)) {
		fmt.Fprintf(out, "  %s=%s\n", k, set[k])
	}
}

func printCluster(out io.Writer, c *devcluster.Cluster) {
	fmt.Fprintf(out, "\nCluster %s is up with %d nodes.\n\n", c.ClusterID(), len(c.Nodes()))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLES\tKAFKA\tCONTROLLER\tHTTP\tREGISTRY\tREST\tCONNECT\tPID\tDIR\tLOG")
	for _, n := range c.Nodes() {
		kafka, ctrl, web, reg, rest, conn := "-", "-", "-", "-", "-", "-"
		if n.Broker() {
			kafka = n.Addr()
		}
		if n.Controller() {
			ctrl = fmt.Sprintf("127.0.0.1:%d", n.ControllerPort)
		}
		if n.HTTPAddr() != "" {
			web = n.HTTPAddr()
		}
		if n.RegistryAddr() != "" {
			reg = n.RegistryAddr()
		}
		if n.RestAddr() != "" {
			rest = n.RestAddr()
		}
		if n.ConnectAddr() != "" {
			conn = n.ConnectAddr()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", n.ID, n.Roles, kafka, ctrl, web, reg, rest, conn, n.Pid(), n.Dir, n.LogPath())
	}
	tw.Flush()
	fmt.Fprintf(out, "\nBootstrap: %s\n  export SAMSA_BOOTSTRAP=%s\n", c.Bootstrap(), c.Bootstrap())
	if n := c.Nodes()[0]; n.HTTPAddr() != "" {
		fmt.Fprintf(out, "Metrics: http://%s/metrics (each node's HTTP address above; /readyz, /healthz)\n", n.HTTPAddr())
	}
	var registries []string
	for _, n := range c.Nodes() {
		if n.RegistryAddr() != "" {
			registries = append(registries, "http://"+n.RegistryAddr())
		}
	}
	if len(registries) > 0 {
		fmt.Fprintf(out, "Schema Registry: %s (one per broker node, sharing the _schemas topic; writes go to the elected primary)\n", strings.Join(registries, ","))
	}
	var proxies []string
	for _, n := range c.Nodes() {
		if n.RestAddr() != "" {
			proxies = append(proxies, "http://"+n.RestAddr())
		}
	}
	if len(proxies) > 0 {
		fmt.Fprintf(out, "REST Proxy: %s (one per broker node, each a client of the whole cluster)\n", strings.Join(proxies, ","))
	}
	var workers []string
	for _, n := range c.Nodes() {
		if n.ConnectAddr() != "" {
			workers = append(workers, "http://"+n.ConnectAddr())
		}
	}
	if len(workers) > 0 {
		fmt.Fprintf(out, "Connect: %s (one worker per broker node, one Connect cluster; any worker's REST API manages it)\n", strings.Join(workers, ","))
	}
	fmt.Fprintln(out, "Ctrl-C stops the cluster.")
}

// stopNodes stops every running node in turn with SIGTERM and reports
// each exit.
func stopNodes(out io.Writer, c *devcluster.Cluster) error {
	failed := 0
	for _, n := range c.Nodes() {
		if !n.Running() {
			continue
		}
		start := time.Now()
		if err := n.Stop(devStopTimeout); err != nil {
			failed++
			fmt.Fprintf(out, "node %d: %v (log: %s)\n", n.ID, err, n.LogPath())
			continue
		}
		fmt.Fprintf(out, "node %d: exited 0 after %v\n", n.ID, time.Since(start).Round(time.Millisecond))
	}
	if err := c.Close(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d nodes did not stop cleanly", failed, len(c.Nodes()))
	}
	return nil
}
