package connectrt

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/task"
)

// kafkaLog is Kafka's KafkaBasedLog: a compacted topic read from its start
// by every worker (no group), each record handed to apply in order, with
// ReadToEnd to wait until every record written before the call has been
// applied. Writes go through a shared producer with acks=all.
type kafkaLog struct {
	topic   string
	client  *kgo.Client // consumer: the whole topic, from the start
	writer  *kgo.Client
	admin   *kadm.Client
	apply   func(r *kgo.Record)
	tasks   *task.Group
	mu      sync.Mutex
	applied map[int32]int64 // next offset to apply, per partition
	waiters []chan struct{}
}

// topicSpec says how to create a log's topic when it is missing.
type topicSpec struct {
	name        string
	partitions  int32
	replication int16
}

// ensureTopic creates a compacted topic, or checks the one there is
// compacted (Kafka refuses a worker whose internal topic is not).
func ensureTopic(ctx context.Context, admin *kadm.Client, spec topicSpec) error {
	rf := spec.replication
	if rf < 0 {
		rf = -1 // the broker's default.replication.factor
	}
	parts := spec.partitions
	if parts < 0 {
		parts = -1
	}
	cleanup := "compact"
	resp, err := admin.CreateTopic(ctx, parts, rf, map[string]*string{"cleanup.policy": &cleanup}, spec.name)
	if err == nil && resp.Err == nil {
		return nil
	}
	if err == nil {
		err = resp.Err
	}
	if !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create internal topic %s: %w", spec.name, err)
	}
	configs, err := admin.DescribeTopicConfigs(ctx, spec.name)
	if err != nil {
		return fmt.Errorf("describe internal topic %s: %w", spec.name, err)
	}
	for _, rc := range configs {
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil && *c.Value != "compact" {
				return fmt.Errorf("internal topic %s has cleanup.policy=%s; Kafka Connect needs compact (it would lose configs or offsets otherwise)", spec.name, *c.Value)
			}
		}
	}
	return nil
}

func newKafkaLog(topic string, opts []kgo.Opt, writer *kgo.Client, admin *kadm.Client, apply func(*kgo.Record), tasks *task.Group) (*kafkaLog, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Transaction markers come back as control records, so the position
		// readToEnd compares moves past a marker at the end of the log.
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, err
	}
	return &kafkaLog{topic: topic, client: cl, writer: writer, admin: admin, apply: apply, tasks: tasks, applied: map[int32]int64{}}, nil
}

// start reads the topic until ctx ends.
func (l *kafkaLog) start(ctx context.Context) {
	l.tasks.Go(func(ctx context.Context) {
		for ctx.Err() == nil {
			fetches := l.client.PollFetches(ctx)
			fetches.EachRecord(func(r *kgo.Record) {
				if !r.Attrs.IsControl() {
					l.apply(r)
				}
				l.mu.Lock()
				l.applied[r.Partition] = r.Offset + 1
				l.mu.Unlock()
			})
			l.wake()
		}
	})
}

func (l *kafkaLog) wake() {
	l.mu.Lock()
	ws := l.waiters
	l.waiters = nil
	l.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

// readToEnd waits until every record in the topic when called is applied.
func (l *kafkaLog) readToEnd(ctx context.Context) error {
	ends, err := l.admin.ListEndOffsets(ctx, l.topic)
	if err != nil {
		return fmt.Errorf("read %s to the end: %w", l.topic, err)
	}
	if err := ends.Error(); err != nil {
		return fmt.Errorf("read %s to the end: %w", l.topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	for {
		if l.reached(want) {
			return nil
		}
		ch := make(chan struct{})
		l.mu.Lock()
		l.waiters = append(l.waiters, ch)
		l.mu.Unlock()
		if l.reached(want) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("read %s to the end: %w", l.topic, ctx.Err())
		}
	}
}

func (l *kafkaLog) reached(want map[int32]int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, end := range want {
		if end > 0 && l.applied[p] < end {
			return false
		}
	}
	return true
}

// send writes one record with acks=all and waits for it.
func (l *kafkaLog) send(ctx context.Context, key, value []byte) error {
	r := &kgo.Record{Topic: l.topic, Key: key, Value: value}
	if err := l.writer.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("write %s: %w", l.topic, err)
	}
	return nil
}

// sendAll writes records in order and waits for all.
func (l *kafkaLog) sendAll(ctx context.Context, recs []*kgo.Record) error {
	for _, r := range recs {
		r.Topic = l.topic
	}
	if err := l.writer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("write %s: %w", l.topic, err)
	}
	return nil
}

func (l *kafkaLog) close() { l.client.Close() }
