package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/twmb/franz-go/pkg/kerr"
)

// startGroups builds the group coordinator over __consumer_offsets and
// starts loading it. The topic itself is created on the first
// FindCoordinator for a group, as Kafka does.
func (b *Broker) startGroups() {
	cfg := b.brokerConfig(b.meta.Load())
	b.groups = group.New(group.ConfigFrom(cfg), group.Deps{
		Log:         b.coordinatorLog(cfg, group.OffsetsTopic),
		TopicExists: b.topicExists,
		TopicName: func(id [16]byte) (string, bool) {
			ts, ok := b.topics.byTopicID(id)
			if !ok {
				return "", false
			}
			return ts.name, true
		},
		TopicID: func(name string) ([16]byte, bool) {
			ts, ok := b.topics.byTopicName(name)
			if !ok {
				return [16]byte{}, false
			}
			return ts.id, true
		},
		TopicPartitions: func(name string) ([16]byte, int32, bool) {
			ts, ok := b.topics.byTopicName(name)
			if !ok {
				return [16]byte{}, 0, false
			}
			return ts.id, int32(len(ts.partitions)), true
		},
		// Every topic, internal ones included: Kafka resolves a regex
		// against all the topics the member may describe, so an
		// expression that names __consumer_offsets gets it.
		TopicNames: func() []string {
			var names []string
			for _, ts := range b.topics.all() {
				names = append(names, ts.name)
			}
			return names
		},
		ShareStates:      b.shareStates,
		DeleteShareState: b.deleteShareState,
		HighWatermark: func(topic string, partition int32) (int64, bool) {
			ts, ok := b.topics.byTopicName(topic)
			if !ok {
				return 0, false
			}
			p, code := ts.partition(partition)
			if code != 0 {
				return 0, false
			}
			return p.HighWatermark(), true
		},
		CreateTopics: b.createStreamsTopics,
		// A group's own configs (the GROUP config resource, KIP-848):
		// the coordinator lays them over the broker's group.* defaults.
		GroupConfigs: func(id string) map[string]string {
			img := b.meta.Load()
			if img == nil {
				return nil
			}
			return img.GroupConfig(id)
		},
		Clock:  b.cfg.Clock,
		Logger: b.cfg.Logger,
	})
	b.groups.Start()
}

// deleteShareState deletes a share group's state of the partitions it
// initialized, for DeleteGroups: nothing without a share coordinator.
func (b *Broker) deleteShareState(ctx context.Context, group string, topics map[[16]byte][]int32) error {
	if b.shareStates == nil {
		return nil
	}
	for id, partitions := range topics {
		if err := b.shareStates.Delete(ctx, group, id, partitions); err != nil {
			return err
		}
	}
	return nil
}

func (b *Broker) topicExists(topic string, partition int32) bool {
	ts, ok := b.topics.byTopicName(topic)
	return ok && partition >= 0 && int(partition) < len(ts.partitions)
}

// ensureOffsetsTopic creates __consumer_offsets if it does not exist, with
// offsets.topic.* settings, compacted.
func (b *Broker) ensureOffsetsTopic(ctx context.Context) error {
	cfg := b.brokerConfig(b.meta.Load())
	return b.ensureInternalTopic(ctx, group.OffsetsTopic, cfg.Int("offsets.topic.num.partitions"),
		cfg.Int("offsets.topic.replication.factor"), cfg.Int("offsets.topic.segment.bytes"), nil)
}

// ensureInternalTopic creates a compacted internal topic if it is missing
// and applies the image that holds it.
func (b *Broker) ensureInternalTopic(ctx context.Context, name string, partitions, replicas, segmentBytes int32, extra map[string]string) error {
	if _, ok := b.topics.byTopicName(name); ok {
		return nil
	}
	configs := map[string]*string{}
	for k, v := range map[string]string{"cleanup.policy": "compact", "segment.bytes": strconv.Itoa(int(segmentBytes)), "compression.type": "producer"} {
		configs[k] = &v
	}
	for k, v := range extra {
		configs[k] = &v
	}
	res := b.createTopics(ctx, []controller.CreateTopic{{
		Name: name, NumPartitions: partitions, ReplicationFactor: int16(replicas), Configs: configs, Internal: true,
	}})
	if r := res[0]; r.ErrorCode != 0 && r.ErrorCode != kerr.TopicAlreadyExists.Code {
		return fmt.Errorf("broker: create %s: %s", name, r.ErrorMessage)
	}
	return b.applyImage(b.ctrl.Image())
}

// internalLog is the Log that the group and transaction coordinators use
// (group.Log, txn.Log): this broker's partitions of their internal topic.
type internalLog struct {
	b     *Broker
	topic string
	// readSize bounds one read while replaying a partition:
	// offsets.load.buffer.size or transaction.state.log.load.buffer.size.
	// The first batch is read whole, however large.
	readSize int32
}

// coordinatorLog is the internalLog of __consumer_offsets or
// __transaction_state, reading with that topic's load buffer size.
func (b *Broker) coordinatorLog(cfg config.Values, topic string) internalLog {
	size := cfg.Int("offsets.load.buffer.size")
	if topic == txn.StateTopic {
		size = cfg.Int("transaction.state.log.load.buffer.size")
	}
	return internalLog{b: b, topic: topic, readSize: size}
}

func (o internalLog) partition(p int32) (*topicState, error) {
	ts, ok := o.b.topics.byTopicName(o.topic)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	if _, code := ts.partition(p); code != 0 {
		return nil, kerr.ErrorForCode(code)
	}
	return ts, nil
}

// Append appends as leader and waits until the batch is on every ISR
// member (appendCommitted); the coordinators map its errors as Kafka does
// (a lost leadership is NOT_COORDINATOR for the client).
func (o internalLog) Append(ctx context.Context, partition int32, batch []byte) error {
	ts, err := o.partition(partition)
	if err != nil {
		return err
	}
	p, _ := ts.partition(partition)
	return appendCommitted(ctx, ts, p, batch, nil)
}

// ReadAll replays the partition as its leader, up to the log end it has
// when the replay starts (ReadAsLeader says why not only to the high
// watermark). Markers appended meanwhile reach the coordinator directly.
func (o internalLog) ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error {
	ts, err := o.partition(partition)
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil // not created yet: nothing to load
	}
	if err != nil {
		return err
	}
	p, _ := ts.partition(partition)
	off, end := p.LogStartOffset(), p.LogEndOffset()
	for off < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		rr, _, err := p.ReadAsLeader(off, o.readSize, true)
		if err != nil {
			return err
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			return err
		}
		whole, next := wholeBatches(data)
		if len(whole) == 0 {
			return fmt.Errorf("broker: %s-%d: no whole batch at offset %d", o.topic, partition, off)
		}
		if err := fn(whole); err != nil {
			return err
		}
		off = next
	}
	return nil
}

// wholeBatches trims a read to its whole batches and returns the offset
// after the last one.
func wholeBatches(data []byte) ([]byte, int64) {
	pos, next := 0, int64(-1)
	for pos < len(data) {
		h, err := record.ParseHeader(data[pos:])
		if err != nil || pos+h.Size() > len(data) {
			break
		}
		pos += h.Size()
		next = h.NextOffset()
	}
	return data[:pos], next
}

// clientHost is the host as Kafka shows it in DescribeGroups: "/" + IP.
// offsetTopicName is the name of a topic an offset API names: by name, or
// from v10 of OffsetCommit and OffsetFetch by ID; false for an unknown ID,
// which the coordinator answers UNKNOWN_TOPIC_ID.
func (b *Broker) offsetTopicName(byID bool, name string, id [16]byte) (string, bool) {
	if !byID {
		return name, true
	}
	ts, ok := b.topics.byTopicID(id)
	if !ok {
		return "", false
	}
	return ts.name, true
}

func clientHost(c *conn) string {
	host, _, err := net.SplitHostPort(c.nc.RemoteAddr().String())
	if err != nil {
		return "/" + c.nc.RemoteAddr().String()
	}
	return "/" + host
}
