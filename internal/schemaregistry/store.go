package schemaregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/task"
)

// store is the registry's log: one partition of a compacted topic, read
// from its start into the state and written with acks=all by an
// idempotent producer. It knows records, not schemas.
type store struct {
	topic  string
	rf     int16
	log    *slog.Logger
	prod   *kgo.Client
	cons   *kgo.Client
	adm    *kadm.Client
	apply  func(key, value []byte) // called by the reader, one record at a time
	tasks  *task.Group
	caught task.Broadcast

	mu struct {
		sync.Mutex
		// next is the offset after the last record applied.
		next int64
		// err is the reader's last failure, reported by waits that time
		// out so that a write's error names why the store is behind.
		err error
	}
}

// ErrStoreTimeout wraps a wait for the store that ran out of time: the
// API answers it with 50002.
var ErrStoreTimeout = errors.New("schemaregistry: timed out waiting for the store")

func newStore(topic string, rf int16, opts []kgo.Opt, log *slog.Logger, apply func(key, value []byte)) (*store, error) {
	prod, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is franz-go's default and needs all acks
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
	)...)
	if err != nil {
		return nil, fmt.Errorf("schemaregistry: producer: %w", err)
	}
	cons, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		// Control records move the position too: without them a store
		// whose last batch is a marker would never look caught up.
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		prod.Close()
		return nil, fmt.Errorf("schemaregistry: consumer: %w", err)
	}
	return &store{topic: topic, rf: rf, log: log, prod: prod, cons: cons, adm: kadm.NewClient(prod), apply: apply}, nil
}

// start makes sure the topic exists as the registry needs it, starts the
// reader and waits until it has read the topic to its end.
func (s *store) start(ctx context.Context) error {
	if err := s.ensureTopic(ctx); err != nil {
		return err
	}
	s.tasks = task.NewGroup(context.Background())
	s.tasks.Go(s.read)
	// The end offset too may be asked of a broker that does not know the
	// new topic's partition yet.
	return s.whileUnknown(ctx, func() error { return s.catchUp(ctx) })
}

func (s *store) close() {
	if s.tasks != nil {
		s.tasks.Stop()
	}
	s.cons.Close()
	s.prod.Close()
}

// ensureTopic creates the topic (one partition, compacted) if missing and
// refuses one that would lose or split the registry's records: more than
// one partition breaks the order of writes, and a delete policy would
// drop schemas once they are old enough.
func (s *store) ensureTopic(ctx context.Context) error {
	_, err := s.adm.CreateTopic(ctx, 1, s.rf, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, s.topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("schemaregistry: create topic %s: %w", s.topic, err)
	}
	var d kadm.TopicDetail
	err = s.whileUnknown(ctx, func() error {
		details, err := s.adm.ListTopics(ctx, s.topic)
		if err != nil {
			return err
		}
		var ok bool
		if d, ok = details[s.topic]; !ok {
			return kerr.UnknownTopicOrPartition
		}
		return d.Err
	})
	if err != nil {
		return fmt.Errorf("schemaregistry: describe topic %s: %w", s.topic, err)
	}
	if n := len(d.Partitions); n != 1 {
		return fmt.Errorf("schemaregistry: the store topic %s has %d partitions; it must have exactly 1", s.topic, n)
	}
	var rc kadm.ResourceConfig
	err = s.whileUnknown(ctx, func() error {
		configs, err := s.adm.DescribeTopicConfigs(ctx, s.topic)
		if err != nil {
			return err
		}
		if rc, err = configs.On(s.topic, nil); err != nil {
			return err
		}
		return rc.Err
	})
	if err != nil {
		return fmt.Errorf("schemaregistry: describe configs of %s: %w", s.topic, err)
	}
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
			return fmt.Errorf("schemaregistry: the store topic %s has cleanup.policy=%s; it must be compact, or old schemas would be deleted", s.topic, c.MaybeValue())
		}
	}
	return nil
}

// whileUnknown runs describe again while the broker answering does not
// know the topic (or its partition's leader) yet: in a cluster, the topic just created reaches the
// other brokers' metadata a moment after CreateTopics answers (Kafka's as
// Samsa's), and a describe may go to one of them. Any other error, or the
// context's end, is returned.
func (s *store) whileUnknown(ctx context.Context, describe func() error) error {
	for {
		err := describe()
		if err == nil || !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.LeaderNotAvailable) && !errors.Is(err, kerr.NotLeaderForPartition) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-time.After(50 * time.Millisecond): // metadata propagation has no event to wait on
		}
	}
}

// read applies every record of the topic in order, for as long as the
// store runs. A fetch error is logged and retried: the reader never
// gives up, and writes and start-up wait on it with their own deadlines.
func (s *store) read(ctx context.Context) {
	for {
		fetches := s.cons.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(topic string, p int32, err error) {
			s.log.Warn("reading the store", "topic", topic, "partition", p, "err", err)
			s.mu.Lock()
			s.mu.err = err
			s.mu.Unlock()
		})
		var next int64 = -1
		fetches.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if r.Attrs.IsControl() {
				return
			}
			s.apply(r.Key, r.Value)
		})
		if next >= 0 {
			s.mu.Lock()
			s.mu.next, s.mu.err = next, nil
			s.mu.Unlock()
			s.caught.Notify()
		}
	}
}

// waitApplied waits until the reader has applied the records before
// offset end.
func (s *store) waitApplied(ctx context.Context, end int64) error {
	for {
		ch := s.caught.Wait()
		s.mu.Lock()
		next, readErr := s.mu.next, s.mu.err
		s.mu.Unlock()
		if next >= end {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if readErr != nil {
				return fmt.Errorf("%w: read up to offset %d of %d: %v", ErrStoreTimeout, next, end, readErr)
			}
			return fmt.Errorf("%w: read up to offset %d of %d", ErrStoreTimeout, next, end)
		}
	}
}

// catchUp waits until the reader has applied everything written to the
// topic so far (its high watermark now). Confluent's registry produces a
// NOOP record to learn the end; asking for the end offset tells the same
// without growing the topic.
func (s *store) catchUp(ctx context.Context) error {
	ends, err := s.adm.ListEndOffsets(ctx, s.topic)
	if err != nil {
		return fmt.Errorf("schemaregistry: end offset of %s: %w", s.topic, err)
	}
	o, ok := ends.Lookup(s.topic, 0)
	if !ok {
		return fmt.Errorf("schemaregistry: end offset of %s: no partition 0", s.topic)
	}
	if o.Err != nil {
		return fmt.Errorf("schemaregistry: end offset of %s: %w", s.topic, o.Err)
	}
	return s.waitApplied(ctx, o.Offset)
}

// write produces one record (a nil value is a tombstone) and waits until
// the reader has applied it, so that the caller's next read sees it.
func (s *store) write(ctx context.Context, key storeKey, value any) error {
	rawKey, err := json.Marshal(key)
	if err != nil {
		return err
	}
	var rawValue []byte
	if value != nil {
		if rawValue, err = json.Marshal(value); err != nil {
			return err
		}
	}
	r, err := s.prod.ProduceSync(ctx, &kgo.Record{Key: rawKey, Value: rawValue, Partition: 0}).First()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: produce: %v", ErrStoreTimeout, err)
		}
		return fmt.Errorf("schemaregistry: produce to %s: %w", s.topic, err)
	}
	return s.waitApplied(ctx, r.Offset+1)
}

// clusterID is the Kafka cluster's ID.
func (s *store) clusterID(ctx context.Context) (string, error) {
	m, err := s.adm.BrokerMetadata(ctx)
	if err != nil {
		return "", err
	}
	return m.Cluster, nil
}
