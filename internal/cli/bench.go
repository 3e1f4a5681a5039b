package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/term"
)

// benchFlags are the flags of the bench subcommands.
type benchFlags struct {
	records     int64
	recordSize  int
	topic       string
	partitions  int32
	replication int16
	create      bool
	acks        string
	compression string
	linger      time.Duration
	batchSize   int32
	rate        float64
	brokerPIDs  []int
	// waitReplicated: bench produce ends with a replication barrier
	// (awaitReplicated).
	waitReplicated bool
	json           bool
	percentiles    []float64
}

// benchHeader is the run id and send time every bench value starts with.
const benchHeader = 16

func newBenchCommand() *cobra.Command {
	var conn connection
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure produce, consume and end-to-end throughput and latency",
		Long: `Measure a cluster with a load generator that is an ordinary Kafka client.

Latency is per record: for produce the time from handing the record to the
client until its acknowledgement; for e2e the time from that hand-off until
the consumer reads it (from a send time embedded in the value), with the ack
latency beside it. Values are at least 16 bytes: a run id and the send time
come first. MB/s counts record values in units of 2^20 bytes, like Kafka's
perf tools.
--broker-pid reads the broker's user+system CPU time from /proc/PID/stat
before and after the run (any broker on this host: Samsa or a JVM). For a
cluster on this host give every node's PID (--broker-pid 1,2,3 or the flag
repeated): the figures are the sum over the processes, each one's beside it.`,
	}
	conn.register(cmd)
	cmd.AddCommand(
		newBenchProduce(&conn),
		newBenchConsume(&conn),
		newBenchE2E(&conn),
	)
	RejectUnknownSubcommands(cmd)
	return cmd
}

func registerBenchCommon(f *pflag.FlagSet, bf *benchFlags) {
	f.Int64Var(&bf.records, "records", 1_000_000, "number of records")
	f.StringVar(&bf.topic, "topic", "samsa-bench", "topic to use")
	f.IntSliceVar(&bf.brokerPIDs, "broker-pid", nil,
		"report the CPU seconds per million records of these local broker processes, summed (comma-separated or repeated)")
	f.BoolVar(&bf.json, "json", false, "print one JSON object instead of text")
}

func registerBenchProducer(f *pflag.FlagSet, bf *benchFlags) {
	f.IntVar(&bf.recordSize, "record-size", 100, fmt.Sprintf("bytes per record value (at least %d)", benchHeader))
	f.Int32Var(&bf.partitions, "partitions", -1, "partitions when the topic is created (-1: broker default)")
	f.Int16Var(&bf.replication, "replication-factor", -1, "replicas when the topic is created (-1: broker default)")
	f.BoolVar(&bf.create, "create", true, "create the topic when it is missing")
	f.StringVar(&bf.acks, "acks", "all", "acknowledgements to wait for: 0, 1 or all")
	f.StringVar(&bf.compression, "compression", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	f.DurationVar(&bf.linger, "linger", defaultLinger, "how long a partition's batch waits for more records")
	registerBatchSize(f, &bf.batchSize)
	// The flag's name before it was aligned with samsa produce and Kafka.
	f.Int32Var(&bf.batchSize, "batch-max-bytes", defaultBatchSize, "same as --batch-size")
	_ = f.MarkDeprecated("batch-max-bytes", "use --batch-size")
	f.Float64Var(&bf.rate, "rate", 0, "records per second to send at most (0: as fast as possible)")
	f.Float64SliceVar(&bf.percentiles, "percentiles", nil,
		"also report latency at these percentiles in --json (e.g. 50,90,99,99.9,100), for a percentile curve")
}

func newBenchProduce(conn *connection) *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "produce",
		Short: "Produce records as fast as the cluster acknowledges them; report per-record ack latency",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, conn, &bf, "produce")
		},
	}
	registerBenchCommon(cmd.Flags(), &bf)
	registerBenchProducer(cmd.Flags(), &bf)
	cmd.Flags().BoolVar(&bf.waitReplicated, "wait-replicated", false,
		"after the last ack, produce one acks=all record to every partition and wait for it, so that every in-sync "+
			"replica holds the whole run before the broker CPU is read (with --acks 1 the followers may still be copying)")
	return cmd
}

func newBenchConsume(conn *connection) *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "consume",
		Short: "Read --records records from the beginning of the topic (or all it holds, if fewer)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, conn, &bf, "consume")
		},
	}
	registerBenchCommon(cmd.Flags(), &bf)
	return cmd
}

func newBenchE2E(conn *connection) *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "e2e",
		Short: "Produce and consume at once; report produce-to-consume latency (use --rate below saturation)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, conn, &bf, "e2e")
		},
	}
	registerBenchCommon(cmd.Flags(), &bf)
	registerBenchProducer(cmd.Flags(), &bf)
	return cmd
}

// benchResult is what a run reports, as text or as --json.
type benchResult struct {
	Mode                 string          `json:"mode"`
	Topic                string          `json:"topic"`
	Records              int64           `json:"records"`
	Bytes                int64           `json:"bytes"`
	ElapsedSeconds       float64         `json:"elapsed_s"`
	RecordsPerSecond     float64         `json:"records_per_s"`
	MBPerSecond          float64         `json:"mb_per_s"`
	Latency              *latencySummary `json:"latency_ms,omitempty"`
	AckLatency           *latencySummary `json:"ack_latency_ms,omitempty"`
	BrokerCPUSeconds     *float64        `json:"broker_cpu_s,omitempty"`
	BrokerCPUPerMillionS *float64        `json:"broker_cpu_s_per_million_records,omitempty"`
	// BrokerCPUSecondsEach is each --broker-pid's share of BrokerCPUSeconds,
	// in the order given, when there are several.
	BrokerCPUSecondsEach []float64 `json:"broker_cpu_s_each,omitempty"`
	// ReplicatedAfterSeconds is, with --wait-replicated, the time from
	// the last ack of the run until the replication barrier's.
	ReplicatedAfterSeconds *float64 `json:"replicated_after_s,omitempty"`
}

func (bf *benchFlags) validate(mode string) error {
	if bf.records <= 0 {
		return fmt.Errorf("invalid --records %d: must be positive", bf.records)
	}
	if bf.topic == "" {
		return errors.New("--topic is empty")
	}
	for i, pid := range bf.brokerPIDs {
		if pid <= 0 {
			return fmt.Errorf("invalid --broker-pid %d", pid)
		}
		if slices.Contains(bf.brokerPIDs[:i], pid) {
			return fmt.Errorf("--broker-pid %d given twice: its CPU time would count twice", pid)
		}
	}
	if mode == "consume" {
		return nil
	}
	if bf.recordSize < benchHeader {
		return fmt.Errorf("invalid --record-size %d: must be at least %d (the run id and send time)", bf.recordSize, benchHeader)
	}
	if bf.rate < 0 {
		return fmt.Errorf("invalid --rate %g: must not be negative", bf.rate)
	}
	for _, p := range bf.percentiles {
		if !(p > 0 && p <= 100) {
			return fmt.Errorf("invalid --percentiles %g: each must be in (0, 100]", p)
		}
	}
	_, err := producerOpts(bf.acks, bf.compression, bf.linger, bf.batchSize)
	return err
}

func runBench(cmd *cobra.Command, conn *connection, bf *benchFlags, mode string) error {
	if err := bf.validate(mode); err != nil {
		return err
	}
	for _, pid := range bf.brokerPIDs {
		if _, err := procCPUSeconds(pid); err != nil {
			return err
		}
	}
	ctx, stop := signalContext(cmd)
	defer stop()
	b := &benchRun{cmd: cmd, conn: conn, flags: bf, clock: conn.clock, base: conn.clock.Now()}
	if err := b.prepareTopic(ctx, mode != "consume"); err != nil {
		return err
	}
	var (
		res benchResult
		err error
	)
	cpuBefore := b.brokerCPU()
	switch mode {
	case "produce":
		res, err = b.produce(ctx)
	case "consume":
		res, err = b.consume(ctx)
	case "e2e":
		res, err = b.e2e(ctx)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return errors.New("interrupted")
		}
		return err
	}
	if len(bf.brokerPIDs) > 0 {
		res.setBrokerCPU(cpuBefore, b.brokerCPU())
	}
	res.Mode, res.Topic = mode, bf.topic
	if secs := res.ElapsedSeconds; secs > 0 {
		res.RecordsPerSecond = float64(res.Records) / secs
		res.MBPerSecond = float64(res.Bytes) / (1 << 20) / secs
	}
	if bf.json {
		out, err := json.Marshal(res)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", out)
		return err
	}
	printBench(cmd.OutOrStdout(), res)
	return nil
}

// brokerCPU reads the CPU seconds of each --broker-pid. The pids were
// checked at start; a broker that exits mid-run reads as 0 and the report
// shows a negative figure rather than failing the run.
func (b *benchRun) brokerCPU() []float64 {
	out := make([]float64, len(b.flags.brokerPIDs))
	for i, pid := range b.flags.brokerPIDs {
		out[i], _ = procCPUSeconds(pid)
	}
	return out
}

// setBrokerCPU fills the CPU fields from the readings of every broker
// process before and after the run: the sum over the processes, per
// million records, and each process's share when there are several.
func (r *benchResult) setBrokerCPU(before, after []float64) {
	var sum float64
	each := make([]float64, len(after))
	for i := range after {
		each[i] = after[i] - before[i]
		sum += each[i]
	}
	perMillion := sum / float64(r.Records) * 1e6
	r.BrokerCPUSeconds, r.BrokerCPUPerMillionS = &sum, &perMillion
	if len(each) > 1 {
		r.BrokerCPUSecondsEach = each
	}
}

func printBench(w io.Writer, r benchResult) {
	fmt.Fprintf(w, "%s: %d records (%d bytes) on topic %q in %.3fs\n",
		r.Mode, r.Records, r.Bytes, r.Topic, r.ElapsedSeconds)
	fmt.Fprintf(w, "throughput: %.0f records/s, %.2f MB/s\n", r.RecordsPerSecond, r.MBPerSecond)
	printLatency := func(name string, l *latencySummary) {
		if l != nil {
			fmt.Fprintf(w, "%s ms: p50 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  (mean %.3f)\n",
				name, l.P50, l.P95, l.P99, l.P999, l.Max, l.Mean)
		}
	}
	if r.Mode == "e2e" {
		printLatency("end-to-end latency", r.Latency)
		printLatency("ack latency", r.AckLatency)
	} else {
		printLatency("ack latency", r.Latency)
	}
	if r.BrokerCPUSeconds != nil {
		fmt.Fprintf(w, "broker CPU: %.2fs (%.2fs per 1M records)", *r.BrokerCPUSeconds, *r.BrokerCPUPerMillionS)
		if len(r.BrokerCPUSecondsEach) > 0 {
			each := make([]string, len(r.BrokerCPUSecondsEach))
			for i, s := range r.BrokerCPUSecondsEach {
				each[i] = fmt.Sprintf("%.2fs", s)
			}
			fmt.Fprintf(w, ", per process %s", strings.Join(each, " + "))
		}
		fmt.Fprintln(w)
	}
}

// prepareTopic makes sure the topic exists, creating it when allowed, and
// waits until every partition has a leader so the first records do not
// measure topic creation.
func (b *benchRun) prepareTopic(ctx context.Context, mayCreate bool) error {
	cl, err := b.conn.client(b.cmd)
	if err != nil {
		return err
	}
	adm := b.conn.adminFor(cl)
	defer adm.Close()
	ctx, cancel := b.conn.opContext(ctx)
	defer cancel()
	_, err = topicMetadata(ctx, adm, b.flags.topic)
	switch {
	case err == nil:
		return nil
	case !mayCreate || !b.flags.create:
		return b.conn.reachErr(b.cmd, err)
	}
	resp, err := adm.CreateTopic(ctx, b.flags.partitions, b.flags.replication, nil, b.flags.topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		if reached := b.conn.reachErr(b.cmd, err); reached != err {
			return reached
		}
		return topicErr(b.flags.topic, err, resp.ErrMessage)
	}
	if _, err := waitForLeaders(ctx, cl, b.flags.topic); err != nil {
		return fmt.Errorf("topic %q: created but partitions have no leader after %s", b.flags.topic, b.conn.timeout)
	}
	if err := waitEveryBroker(ctx, cl, b.flags.topic); err != nil {
		return fmt.Errorf("topic %q: created but not known to every broker after %s: %w", b.flags.topic, b.conn.timeout, err)
	}
	return nil
}

// waitEveryBroker waits until every broker of the cluster, asked itself,
// lists the topic with a leader for each partition. A broker learns of a
// new topic from the metadata log some time after the controller answers
// CreateTopics (in Kafka as in Samsa), and a run whose first request goes
// to one that has not (e2e's ListOffsets) would be told that the topic
// does not exist.
func waitEveryBroker(ctx context.Context, cl *kgo.Client, topic string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			for _, br := range resp.Brokers {
				if err = ledBy(ctx, cl, br.NodeID, req); err != nil {
					break
				}
			}
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// ledBy asks broker id for the topic of req and fails unless it lists
// every partition with a leader.
func ledBy(ctx context.Context, cl *kgo.Client, id int32, req *kmsg.MetadataRequest) error {
	r, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		return fmt.Errorf("broker %d: %w", id, err)
	}
	resp := r.(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) == 0 {
		return fmt.Errorf("broker %d does not list the topic", id)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return fmt.Errorf("broker %d: %w", id, err)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.Leader < 0 {
			return fmt.Errorf("broker %d: partition %d has no leader", id, p.Partition)
		}
	}
	return nil
}

// newProgress returns a progress bar on w when w is a terminal, else nil.
// Make it when the run starts: its clock starts with it.
func newProgress(w io.Writer, total int64, what string) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return newBar(w, total, what)
}

// newBar draws a started progress bar on w. The library otherwise starts
// its clock at the first render, which is the first Add: that first tick
// then divided progressStep records by a few microseconds.
func newBar(w io.Writer, total int64, what string) *progressbar.ProgressBar {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("records"),
		progressbar.OptionClearOnFinish(),
	)
	bar.StartWithoutRender()
	_ = bar.RenderBlank()
	return bar
}

// producerBenchOpts are the client options of the bench producers; the
// record pool, not the client, bounds what is in flight.
func (bf *benchFlags) producerBenchOpts(poolSize int) []kgo.Opt {
	opts, _ := producerOpts(bf.acks, bf.compression, bf.linger, bf.batchSize) // validated
	return append(opts, kgo.MaxBufferedRecords(poolSize+1))
}
