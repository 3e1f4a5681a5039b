package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

func newMirrorCommand() *cobra.Command {
	var configFile, metricsListener string
	var targets []string
	cmd := &cobra.Command{
		Use:   "mirror --config mm2.properties",
		Short: "Mirror topics between Kafka clusters (MirrorMaker 2 compatible, or offset-preserving)",
		Long: `Run the flows of a MirrorMaker 2 dedicated-mode configuration (the file
connect-mirror-maker.sh takes: clusters, A.bootstrap.servers, A->B.enabled,
topics, groups, replication.policy.class, sync.group.offsets.enabled ...)
in this process: remote topics created and kept in step, records copied,
offset syncs, checkpoints and heartbeats in MirrorMaker 2's internal topics
and formats, consumer group offsets translated to the target. A flow with
exactly.once.source.support = enabled copies transactionally; one with
samsa.offset.preserving.enabled = true appends every source batch at its
source offset to a Samsa mirror topic (docs/DESIGN-mirror.md). A Kafka
client only: it runs between any Kafka clusters (offset preserving needs a
Samsa target). It runs until interrupted; without --config it prints this help.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += "; did you mean " + oneOf(s) + "?"
				}
				return fmt.Errorf("%s (see %s --help)", msg, cmd.CommandPath())
			}
			if configFile == "" {
				return cmd.Help()
			}
			cfg, clients, err := LoadMirrorConfig(configFile)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			m, err := mirror.New(mirror.Options{Config: cfg, Clients: clients, Logger: logger, Targets: targets})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if metricsListener != "" {
				srv, addr, err := serveMirrorMetrics(metricsListener, m)
				if err != nil {
					return err
				}
				defer srv.Close()
				logger.Info("mirror metrics", "url", "http://"+addr+"/metrics")
			}
			for _, f := range cfg.Flows {
				if len(targets) == 0 || slices.Contains(targets, f.Target) {
					fmt.Fprintf(cmd.OutOrStdout(), "mirroring %s\n", f.Name)
				}
			}
			err = m.Run(ctx)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the MirrorMaker 2 properties file")
	cmd.SuggestionsMinimumDistance = 2
	cmd.Flags().StringSliceVar(&targets, "clusters", nil, "run only the flows into these clusters (MirrorMaker's --clusters)")
	cmd.Flags().StringVar(&metricsListener, "metrics-listener", "", "serve Prometheus metrics and /status on this host:port (off when empty)")
	cmd.AddCommand(newMirrorStatusCommand(), newMirrorPromoteCommand())
	return cmd
}

func newMirrorStatusCommand() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --config mm2.properties",
		Short: "Show each mirrored partition's position and lag, read from the clusters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, clients, err := LoadMirrorConfig(configFile)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			lags, err := mirror.Status(ctx, cfg, clients)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(lags)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "FLOW\tSOURCE\tTARGET\tPARTITION\tSOURCE-END\tMIRRORED-TO\tLAG\tMODE")
			for _, l := range lags {
				mode := "translate"
				if l.OffsetPreserved {
					mode = "offset-preserving"
				}
				if l.Stopped != "" {
					mode += " (" + l.Stopped + ")"
				}
				end := strconv.FormatInt(l.SourceEnd, 10)
				if l.SourceEnd < 0 {
					end = "?"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%d\t%d\t%s\n", l.Flow, l.SourceTopic, l.TargetTopic, l.Partition, end, l.Next, l.Lag, mode)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the MirrorMaker 2 properties file (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func newMirrorPromoteCommand() *cobra.Command {
	var configFile string
	var flows, topics []string
	cmd := &cobra.Command{
		Use:   "promote --config mm2.properties [--flow A->B] [--topic T ...]",
		Short: "Make offset-preserving mirror topics writable on their target (failover)",
		Long: `Promote the mirror topics of the offset-preserving flows (all, or those of
--flow) on their target cluster: their samsa.mirror.source config is
deleted, so producers can write them, after the last mirrored offset. A
running mirror stops copying a promoted topic. Consumer groups whose offsets
the mirror synced carry on at the same offsets.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, clients, err := LoadMirrorConfig(configFile)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			done, err := mirror.Promote(ctx, cfg, clients, flows, topics)
			for _, t := range done {
				fmt.Fprintf(cmd.OutOrStdout(), "promoted %s\n", t)
			}
			if err != nil {
				return err
			}
			if len(done) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no mirror topic to promote")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the MirrorMaker 2 properties file (required)")
	cmd.Flags().StringSliceVar(&flows, "flow", nil, "only these flows (A->B); all offset-preserving flows when unset")
	cmd.Flags().StringSliceVar(&topics, "topic", nil, "only these target topics; all of the flows' mirror topics when unset")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// LoadMirrorConfig parses the file and makes the client factory: each
// cluster's bootstrap servers and its security settings, read as
// --command-config reads them.
func LoadMirrorConfig(path string) (*mirrorconf.Config, mirror.ClientFunc, error) {
	cfg, err := mirrorconf.ParseFile(path)
	if err != nil {
		return nil, nil, err
	}
	base := map[string][]kgo.Opt{}
	for alias, c := range cfg.Clusters {
		opts, err := mirrorClusterOpts(c)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: cluster %s: %w", path, alias, err)
		}
		base[alias] = opts
	}
	clients := func(cluster string, extra ...kgo.Opt) (*kgo.Client, error) {
		opts, ok := base[cluster]
		if !ok {
			return nil, fmt.Errorf("no cluster %q in the configuration", cluster)
		}
		return kgo.NewClient(append(slices.Clone(opts), extra...)...)
	}
	return cfg, clients, nil
}

func mirrorClusterOpts(c *mirrorconf.Cluster) ([]kgo.Opt, error) {
	// The producer., consumer. and admin. overrides are the runtime's
	// (internal/mirror maps each to its clients).
	opts := []kgo.Opt{kgo.SeedBrokers(c.Bootstrap...), kgo.ClientID("samsa-mirror")}
	sec, err := securityOpts(c.Security, c.Alias+".")
	if err != nil {
		return nil, err
	}
	return append(opts, sec...), nil
}

// serveMirrorMetrics serves /metrics (Prometheus) and /status (JSON).
func serveMirrorMetrics(addr string, m *mirror.Mirror) (*http.Server, string, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewMirrorCollector(m))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"partitions": m.Lag(), "flows": m.Counters()})
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--metrics-listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln.Addr().String(), nil
}

var (
	mirrorLagDesc = prometheus.NewDesc("samsa_mirror_partition_lag_records",
		"Records of the source partition not yet mirrored (its last stable offset minus the next offset to copy).",
		[]string{"flow", "topic", "partition"}, nil)
	mirrorNextDesc = prometheus.NewDesc("samsa_mirror_partition_next_offset",
		"The next source offset the mirror copies.", []string{"flow", "topic", "partition"}, nil)
	mirrorStoppedDesc = prometheus.NewDesc("samsa_mirror_partition_stopped",
		"1 when the mirror no longer copies the partition (promoted, or an error it cannot pass).", []string{"flow", "topic", "partition"}, nil)
	mirrorCounterDescs = map[string]*prometheus.Desc{
		"records":     prometheus.NewDesc("samsa_mirror_records_total", "Records copied.", []string{"flow"}, nil),
		"bytes":       prometheus.NewDesc("samsa_mirror_bytes_total", "Bytes copied (keys and values; whole batches when offset preserving).", []string{"flow"}, nil),
		"syncs":       prometheus.NewDesc("samsa_mirror_offset_syncs_total", "Offset syncs written.", []string{"flow"}, nil),
		"checkpoints": prometheus.NewDesc("samsa_mirror_checkpoints_total", "Checkpoints written.", []string{"flow"}, nil),
		"group_syncs": prometheus.NewDesc("samsa_mirror_group_offset_syncs_total", "Target group offsets committed.", []string{"flow"}, nil),
		"heartbeats":  prometheus.NewDesc("samsa_mirror_heartbeats_total", "Heartbeats written.", []string{"flow"}, nil),
		"topics":      prometheus.NewDesc("samsa_mirror_topics_created_total", "Remote topics created.", []string{"flow"}, nil),
		"errors":      prometheus.NewDesc("samsa_mirror_errors_total", "Failures after which a part of the flow started again.", []string{"flow"}, nil),
		"latency_ms":  prometheus.NewDesc("samsa_mirror_replication_latency_ms", "The age of the last copied record when the target acknowledged it.", []string{"flow"}, nil),
	}
)

type mirrorCollector struct{ m *mirror.Mirror }

// NewMirrorCollector exports a running mirror's lag and counters as
// Prometheus metrics (samsa mirror --metrics-listener, and samsa serve's
// /metrics when it runs a mirror).
func NewMirrorCollector(m *mirror.Mirror) prometheus.Collector { return mirrorCollector{m} }

func (c mirrorCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- mirrorLagDesc
	ch <- mirrorNextDesc
	ch <- mirrorStoppedDesc
	for _, d := range mirrorCounterDescs {
		ch <- d
	}
}

func (c mirrorCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.m.Lag() {
		p := strconv.Itoa(int(l.Partition))
		ch <- prometheus.MustNewConstMetric(mirrorLagDesc, prometheus.GaugeValue, float64(l.Lag), l.Flow, l.SourceTopic, p)
		ch <- prometheus.MustNewConstMetric(mirrorNextDesc, prometheus.GaugeValue, float64(l.Next), l.Flow, l.SourceTopic, p)
		stopped := 0.0
		if l.Stopped != "" {
			stopped = 1
		}
		ch <- prometheus.MustNewConstMetric(mirrorStoppedDesc, prometheus.GaugeValue, stopped, l.Flow, l.SourceTopic, p)
	}
	for _, f := range c.m.Counters() {
		counter := func(name string, v int64) {
			ch <- prometheus.MustNewConstMetric(mirrorCounterDescs[name], prometheus.CounterValue, float64(v), f.Flow)
		}
		counter("records", f.Records)
		counter("bytes", f.Bytes)
		counter("syncs", f.OffsetSyncs)
		counter("checkpoints", f.Checkpoints)
		counter("group_syncs", f.GroupOffsetSyncs)
		counter("heartbeats", f.Heartbeats)
		counter("topics", f.TopicsCreated)
		counter("errors", f.Errors)
		ch <- prometheus.MustNewConstMetric(mirrorCounterDescs["latency_ms"], prometheus.GaugeValue, float64(f.LastReplicationMs), f.Flow)
	}
}
