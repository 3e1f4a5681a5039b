package mirror

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/version"

	mirrorrt "github.com/samsa-io/samsa/internal/mirror"
)

// The source partition and offset keys of MirrorSourceTask's records
// (MirrorUtils.wrapPartition and wrapOffset), so that the offsets a Kafka
// worker stored read back here and the other way round.
const (
	partitionCluster = "cluster"
	partitionTopic   = "topic"
	partitionNumber  = "partition"
	offsetKey        = "offset"
)

type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string { return tp.topic + "-" + strconv.Itoa(int(tp.partition)) }

// parseTopicPartition reads Kafka's TopicPartition.toString ("topic-3"); a
// topic may itself contain dashes.
func parseTopicPartition(s string) (topicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return topicPartition{}, fmt.Errorf("%q is not topic-partition", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return topicPartition{}, fmt.Errorf("%q is not topic-partition", s)
	}
	return topicPartition{s[:i], int32(p)}, nil
}

// SourceConnector is MirrorSourceConnector: it keeps the remote topics in
// step with the source (created with the source's partitions and configs,
// grown, configs and ACLs synced; mirror.TopicSync) and splits the
// partitions of the topics ready to copy among its tasks, round robin, as
// Kafka's does. A refresh that finds new partitions asks for new task
// configs.
type SourceConnector struct {
	props map[string]string
	cfg   *mirrorconf.ConnectorConfig
	g     *task.Group

	mu         sync.Mutex
	partitions []topicPartition // sorted by topic, partition
}

var (
	_ connect.SourceConnector            = (*SourceConnector)(nil)
	_ connect.ConnectorValidator         = (*SourceConnector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*SourceConnector)(nil)
)

func (c *SourceConnector) Version() string            { return version.String() }
func (c *SourceConnector) Config() *connect.ConfigDef { return configDef() }
func (c *SourceConnector) NewTask() connect.SourceTask {
	return &SourceTask{}
}

func (c *SourceConnector) Validate(props map[string]string) []connect.ConfigValue {
	return validate(mirrorconf.SourceConnector, props)
}

// ExactlyOnceSupport is Kafka's: exactly once needs a source consumer that
// reads only committed records (Samsa's default; Kafka's consumer reads
// uncommitted ones unless told).
func (c *SourceConnector) ExactlyOnceSupport(props map[string]string) connect.ExactlyOnceSupport {
	cc, err := parse(mirrorconf.SourceConnector, props)
	if err != nil || cc.Source.Consumer["isolation.level"] != "read_committed" {
		return connect.ExactlyOnceUnsupported
	}
	return connect.ExactlyOnceSupported
}

func (c *SourceConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	cc, err := parse(mirrorconf.SourceConnector, props)
	if err != nil {
		return err
	}
	c.props, c.cfg = maps.Clone(props), cc
	if !cc.Enabled || cc.Flow == nil {
		return nil
	}
	cl := clients{cfg: cc}
	ts, err := mirrorrt.NewTopicSync(cc.Config, cc.Flow, cl.clientFunc, ctx.Logger())
	if err != nil {
		return err
	}
	c.g = task.NewGroup(context.Background())
	c.g.Go(func(gctx context.Context) {
		background(gctx, ctx.Logger(), "topic sync", func(gctx context.Context) error {
			return ts.Run(gctx, func() { c.topicsChanged(ctx, ts.Topics()) })
		})
	})
	return nil
}

// topicsChanged asks for task configs again when the partitions to copy
// are not the ones the tasks have.
func (c *SourceConnector) topicsChanged(ctx connect.ConnectorContext, topics map[string]int32) {
	var parts []topicPartition
	for t, n := range topics {
		for p := range n {
			parts = append(parts, topicPartition{t, p})
		}
	}
	slices.SortFunc(parts, func(a, b topicPartition) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	c.mu.Lock()
	same := slices.Equal(parts, c.partitions)
	c.partitions = parts
	c.mu.Unlock()
	if !same {
		ctx.RequestTaskReconfiguration()
	}
}

// TaskConfigs deals the partitions round robin to at most maxTasks tasks;
// none before the first topic sync (or when nothing matches).
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	c.mu.Lock()
	parts := slices.Clone(c.partitions)
	c.mu.Unlock()
	n := min(maxTasks, len(parts))
	out := make([]map[string]string, n)
	assigned := make([][]string, n)
	for i, tp := range parts {
		assigned[i%n] = append(assigned[i%n], tp.String())
	}
	for i := range out {
		out[i] = maps.Clone(c.props)
		out[i][TaskAssignedPartitions] = strings.Join(assigned[i], ",")
		out[i][TaskIndex] = strconv.Itoa(i)
	}
	return out, nil
}

func (c *SourceConnector) Stop() error {
	if c.g != nil {
		c.g.Stop()
	}
	return nil
}

// SourceTask is MirrorSourceTask: it consumes its source partitions from
// the offsets the runtime stored (the next after the last copied; from
// auto.offset.reset, earliest by default, when none), hands each record to
// the runtime for the same partition of the remote topic with its key,
// value, headers and timestamp, and sends offset syncs (mm2.SyncWriter) as
// the target acknowledges records (CommitRecord) and after each offset
// commit (Commit).
type SourceTask struct {
	flow        *mirrorconf.Flow
	consumer    *kgo.Client
	syncs       *kgo.Client // nil when emit.offset-syncs.enabled is false
	syncTopic   string
	pollTimeout time.Duration
	maxRecords  int
	ctx         connect.SourceTaskContext

	mu     sync.Mutex
	writer *mm2.SyncWriter
}

var (
	_ connect.SourceTask            = (*SourceTask)(nil)
	_ connect.SourceRecordCommitter = (*SourceTask)(nil)
	_ connect.SourceTaskCommitter   = (*SourceTask)(nil)
)

func (t *SourceTask) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	cc, err := parse(mirrorconf.SourceConnector, props)
	if err != nil {
		return err
	}
	if cc.Flow == nil {
		return fmt.Errorf("the connector is not enabled")
	}
	t.flow, t.ctx = cc.Flow, ctx
	t.pollTimeout = cc.Flow.ConsumerPollTimeout
	t.maxRecords = 500 // Kafka's max.poll.records default
	if v, ok := cc.Source.Consumer["max.poll.records"]; ok {
		t.maxRecords, _ = strconv.Atoi(v)
	}
	t.writer = mm2.NewSyncWriter(cc.Flow.OffsetLagMax)
	reset := kgo.NewOffset().AtStart()
	if cc.Source.Consumer["auto.offset.reset"] == "latest" {
		reset = kgo.NewOffset().AtEnd()
	}
	start := map[string]map[int32]kgo.Offset{}
	for _, s := range splitAssigned(props[TaskAssignedPartitions]) {
		tp, err := parseTopicPartition(s)
		if err != nil {
			return fmt.Errorf("%s: %w", TaskAssignedPartitions, err)
		}
		at := reset
		off, err := ctx.Offset(map[string]any{partitionCluster: cc.Flow.Source, partitionTopic: tp.topic, partitionNumber: tp.partition})
		if err != nil {
			return err
		}
		if n, ok := off[offsetKey].(int64); ok && n >= 0 {
			at = kgo.NewOffset().At(n + 1)
		}
		if start[tp.topic] == nil {
			start[tp.topic] = map[int32]kgo.Offset{}
		}
		start[tp.topic][tp.partition] = at
	}
	cl := clients{cfg: cc}
	t.consumer, err = cl.client(cc.Flow.Source, "consumer", kgo.ConsumePartitions(start), kgo.ConsumeResetOffset(reset))
	if err != nil {
		return err
	}
	if cc.Flow.EmitOffsetSyncs {
		t.syncTopic = cc.Flow.OffsetSyncsTopic()
		t.syncs, err = cl.client(offsetSyncsCluster(cc.Flow), "producer", kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			t.consumer.Close()
			return err
		}
	}
	return nil
}

func splitAssigned(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Poll returns what the source gave within consumer.poll.timeout.ms. A
// failed fetch is logged and polled again, as Kafka's task does (the
// client retries on its own).
func (t *SourceTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	pctx, cancel := context.WithTimeout(ctx, t.pollTimeout)
	defer cancel()
	fs := t.consumer.PollRecords(pctx, t.maxRecords)
	fs.EachError(func(topic string, p int32, err error) {
		if ctx.Err() == nil && pctx.Err() == nil {
			t.ctx.Logger().Warn("mirror source: fetch failed", "topic", topic, "partition", p, "err", err)
		}
	})
	var out []connect.SourceRecord
	fs.EachRecord(func(r *kgo.Record) {
		out = append(out, t.convert(r))
	})
	return out, nil
}

// convert is MirrorSourceTask.convertRecord.
func (t *SourceTask) convert(r *kgo.Record) connect.SourceRecord {
	var hs connect.Headers
	for _, h := range r.Headers {
		hs = append(hs, connect.Header{Key: h.Key, Schema: connect.OptionalBytes, Value: h.Value})
	}
	// A nil key or value stays null; an empty one stays empty.
	var key, value any
	if r.Key != nil {
		key = r.Key
	}
	if r.Value != nil {
		value = r.Value
	}
	return connect.SourceRecord{
		Record: connect.Record{
			Topic: t.flow.RemoteTopic(r.Topic), Partition: connect.PartitionOf(r.Partition),
			KeySchema: connect.OptionalBytes, Key: key, ValueSchema: connect.OptionalBytes, Value: value,
			Timestamp: r.Timestamp, Headers: hs,
		},
		SourcePartition: map[string]any{partitionCluster: t.flow.Source, partitionTopic: r.Topic, partitionNumber: r.Partition},
		SourceOffset:    map[string]any{offsetKey: r.Offset},
	}
}

// CommitRecord is MirrorSourceTask.commitRecord: a record the target
// acknowledged feeds the offset-sync rule. Records without metadata (a
// transform dropped them, acks=0) are skipped, as Kafka does.
func (t *SourceTask) CommitRecord(r connect.SourceRecord, md *connect.RecordMetadata) error {
	if t.syncs == nil || md == nil || md.Offset < 0 {
		return nil
	}
	topic, _ := r.SourcePartition[partitionTopic].(string)
	partition, _ := r.SourcePartition[partitionNumber].(int32)
	upstream, _ := r.SourceOffset[offsetKey].(int64)
	t.mu.Lock()
	out := t.writer.Record(topic, partition, upstream, md.Offset)
	t.mu.Unlock()
	t.send(out)
	return nil
}

// Commit is MirrorSourceTask.commit: after the runtime stored the source
// offsets, the delayed syncs go out, so a quiet partition's last records
// translate too.
func (t *SourceTask) Commit() error {
	if t.syncs == nil {
		return nil
	}
	t.mu.Lock()
	out := t.writer.Pending()
	t.mu.Unlock()
	t.send(out)
	return nil
}

func (t *SourceTask) send(syncs []mm2.OffsetSync) {
	for _, s := range syncs {
		rec := &kgo.Record{Topic: t.syncTopic, Partition: 0, Key: s.Key(), Value: s.Value()}
		t.syncs.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
			if err != nil {
				t.ctx.Logger().Warn("mirror source: offset sync not written", "topic", t.syncTopic, "err", err)
			}
			t.mu.Lock()
			t.writer.Acked()
			t.mu.Unlock()
		})
	}
}

func (t *SourceTask) Stop() error {
	if t.consumer != nil {
		t.consumer.Close()
	}
	if t.syncs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = t.syncs.Flush(ctx)
		t.syncs.Close()
	}
	return nil
}
