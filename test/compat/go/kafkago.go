package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// kafkaGoFamily is segmentio/kafka-go.
type kafkaGoFamily struct {
	bootstrap string
	// tls and mech are the secured connection's, nil for PLAINTEXT.
	tls  *tls.Config
	mech sasl.Mechanism
}

func newKafkaGoFamily(bootstrap string) *kafkaGoFamily { return &kafkaGoFamily{bootstrap: bootstrap} }

func (f *kafkaGoFamily) withSecurity(s security) (securedFamily, error) {
	g := &kafkaGoFamily{bootstrap: s.bootstrap}
	if s.tls() {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		g.tls = cfg
	}
	if s.sasl() {
		var err error
		switch s.mechanism {
		case "PLAIN":
			g.mech = plain.Mechanism{Username: s.user, Password: s.password}
		case "SCRAM-SHA-256":
			g.mech, err = scram.Mechanism(scram.SHA256, s.user, s.password)
		case "SCRAM-SHA-512":
			g.mech, err = scram.Mechanism(scram.SHA512, s.user, s.password)
		case "OAUTHBEARER":
			return nil, unsupported("kafka-go ships no OAUTHBEARER mechanism (sasl/plain, sasl/scram and sasl/aws_msk_iam only)")
		}
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

// transport is a transport of the family's own: the shared default one
// caches metadata.
func (f *kafkaGoFamily) transport() *kafka.Transport {
	return &kafka.Transport{ClientID: "samsa-compat-go", TLS: f.tls, SASL: f.mech}
}

// dialer is the readers' (they do not take a transport).
func (f *kafkaGoFamily) dialer() *kafka.Dialer {
	return &kafka.Dialer{ClientID: "samsa-compat-go", Timeout: 10 * time.Second, DualStack: true, TLS: f.tls, SASLMechanism: f.mech}
}

// login is one Metadata request.
func (f *kafkaGoFamily) login(ctx context.Context) error {
	_, err := f.client().Metadata(ctx, &kafka.MetadataRequest{})
	return err
}

func (f *kafkaGoFamily) authFailed(err error) bool {
	return errors.Is(err, kafka.SASLAuthenticationFailed)
}

// produceOne goes through a Conn: the Writer's transport learns topics from
// a metadata listing of all of them, where Kafka leaves out those the
// principal may not describe, so a denied topic looks unknown to it and it
// waits for the topic to appear. DialLeader asks for the topic by name.
func (f *kafkaGoFamily) produceOne(ctx context.Context, topic string, r rec) error {
	conn, err := f.dialer().DialLeader(ctx, "tcp", seeds(f.bootstrap)[0], topic, 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	_, err = conn.WriteMessages(kafka.Message{Key: r.Key, Value: r.Value})
	return err
}

func (f *kafkaGoFamily) topicDenied(err error) bool {
	return errors.Is(err, kafka.TopicAuthorizationFailed)
}

func (f *kafkaGoFamily) name() string    { return "segmentio/kafka-go" }
func (f *kafkaGoFamily) version() string { return moduleVersion("github.com/segmentio/kafka-go") }

// nullAware is false: kafka-go's decoder (protocol readVarBytes) hands an
// empty header value to the reader as nil, so an empty header value reads
// back as null whatever the broker stored. Null and empty keys and values
// do keep the difference.
func (f *kafkaGoFamily) nullAware() bool { return false }

func (f *kafkaGoFamily) client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(seeds(f.bootstrap)...), Timeout: 20 * time.Second, Transport: f.transport()}
}

func (f *kafkaGoFamily) createTopic(ctx context.Context, topic string, partitions int32) error {
	resp, err := f.client().CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: int(partitions), ReplicationFactor: 1}}})
	if err != nil {
		return err
	}
	return resp.Errors[topic]
}

func (f *kafkaGoFamily) deleteTopic(ctx context.Context, topic string) error {
	resp, err := f.client().DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err != nil {
		return err
	}
	return resp.Errors[topic]
}

func (f *kafkaGoFamily) partitions(ctx context.Context, topic string) (int32, error) {
	md, err := f.client().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
			return -1, nil
		}
		if t.Error != nil {
			return 0, t.Error
		}
		return int32(len(t.Partitions)), nil
	}
	return -1, nil
}

func kafkaGoCodec(codec string) kafka.Compression {
	switch codec {
	case "gzip":
		return kafka.Gzip
	case "snappy":
		return kafka.Snappy
	case "lz4":
		return kafka.Lz4
	case "zstd":
		return kafka.Zstd
	}
	return 0
}

func fromKafkaGo(m kafka.Message) rec {
	r := rec{Partition: int32(m.Partition), Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Time.UnixMilli()}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{h.Key, h.Value})
	}
	return r
}

func (f *kafkaGoFamily) produce(ctx context.Context, topic string, o produceOpts, recs []rec) error {
	if o.idempotent {
		return unsupported("kafka-go has no idempotent producer")
	}
	w := &kafka.Writer{
		Addr:      kafka.TCP(seeds(f.bootstrap)...),
		Topic:     topic,
		Transport: f.transport(),
		// The partition rides in WriterData: kafka-go's Partition field
		// is read-only on the writing side.
		Balancer:     kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) }),
		RequiredAcks: kafka.RequiredAcks(o.acks),
		Compression:  kafkaGoCodec(o.codec),
		BatchSize:    len(recs),
		BatchTimeout: 10 * time.Millisecond,
		BatchBytes:   16 << 20,
	}
	defer w.Close()
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		m := kafka.Message{Key: r.Key, Value: r.Value, Time: time.UnixMilli(r.Timestamp), WriterData: int(r.Partition)}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
		msgs[i] = m
	}
	return w.WriteMessages(ctx, msgs...)
}

// consume reads each partition until the reader's position
// (Reader.Offset) is at its end (readEnd.reached).
func (f *kafkaGoFamily) consume(ctx context.Context, topic string, ends map[int32]readEnd, readCommitted bool) (map[int32][]rec, error) {
	iso := kafka.ReadUncommitted
	if readCommitted {
		iso = kafka.ReadCommitted
	}
	got := map[int32][]rec{}
	for p, e := range ends {
		rd := kafka.NewReader(kafka.ReaderConfig{Brokers: seeds(f.bootstrap), Topic: topic, Partition: int(p), Dialer: f.dialer(),
			MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 100 * time.Millisecond, IsolationLevel: iso})
		last := int64(-1)
		for !e.reached(rd.Offset(), last) {
			m, err := rd.ReadMessage(ctx)
			if err != nil {
				rd.Close()
				return got, fmt.Errorf("partition %d: at %d (last record read %d), end offset %d: %w", p, rd.Offset(), last, e.end, err)
			}
			got[p] = append(got[p], fromKafkaGo(m))
			last = max(last, m.Offset)
		}
		rd.Close()
	}
	return got, nil
}

type kafkaGoMember struct {
	rd        *kafka.Reader
	mu        sync.Mutex
	delivered []kafka.Message
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

func (f *kafkaGoFamily) join(ctx context.Context, topic, group string, out chan<- rec) (member, error) {
	rd := kafka.NewReader(kafka.ReaderConfig{Brokers: seeds(f.bootstrap), GroupID: group, Topic: topic, Dialer: f.dialer(),
		StartOffset: kafka.FirstOffset, CommitInterval: 0, HeartbeatInterval: 500 * time.Millisecond,
		MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 100 * time.Millisecond, JoinGroupBackoff: 500 * time.Millisecond})
	rctx, cancel := context.WithCancel(context.Background())
	m := &kafkaGoMember{rd: rd, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			msg, err := rd.FetchMessage(rctx)
			if err != nil {
				if rctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
					return
				}
				continue
			}
			select {
			case out <- fromKafkaGo(msg):
				m.mu.Lock()
				m.delivered = append(m.delivered, msg)
				m.mu.Unlock()
			case <-rctx.Done():
				return
			}
		}
	}()
	return m, nil
}

func (m *kafkaGoMember) commit(ctx context.Context) error {
	m.mu.Lock()
	msgs := append([]kafka.Message(nil), m.delivered...)
	m.mu.Unlock()
	return m.rd.CommitMessages(ctx, msgs...)
}

func (m *kafkaGoMember) close() error {
	var err error
	m.closeOnce.Do(func() {
		m.cancel()
		<-m.done
		err = m.rd.Close() // leaves the group
	})
	return err
}

func (f *kafkaGoFamily) listOffset(ctx context.Context, topic string, partition int32, spec int64) (int64, error) {
	resp, err := f.client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {{Partition: int(partition), Timestamp: spec}}}})
	if err != nil {
		return 0, err
	}
	for _, po := range resp.Topics[topic] {
		if po.Partition != int(partition) {
			continue
		}
		if po.Error != nil {
			return 0, po.Error
		}
		// kafka-go files an answer by the timestamp asked for: earliest
		// in FirstOffset, latest in LastOffset, a timestamp's offset as a
		// key of Offsets.
		switch spec {
		case -2:
			return po.FirstOffset, nil
		case -1:
			return po.LastOffset, nil
		}
		for o := range po.Offsets {
			return o, nil
		}
		return 0, fmt.Errorf("no offset for timestamp %d in the answer", spec)
	}
	return 0, fmt.Errorf("partition not in the answer")
}

func (f *kafkaGoFamily) setGroupOffsets(ctx context.Context, group, topic string, offsets map[int32]int64) error {
	var ocs []kafka.OffsetCommit
	for p, o := range offsets {
		ocs = append(ocs, kafka.OffsetCommit{Partition: int(p), Offset: o})
	}
	resp, err := f.client().OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{topic: ocs}})
	if err != nil {
		return err
	}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return fmt.Errorf("partition %d: %w", p.Partition, p.Error)
		}
	}
	return nil
}

func (f *kafkaGoFamily) topicConfig(ctx context.Context, topic, key string) (string, error) {
	resp, err := f.client().DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}}})
	if err != nil {
		return "", err
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return "", r.Error
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigName == key {
				return e.ConfigValue, nil
			}
		}
	}
	return "", fmt.Errorf("%s not described", key)
}

func (f *kafkaGoFamily) alterTopicConfig(ctx context.Context, topic, key, value string) error {
	resp, err := f.client().IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{
		Resources: []kafka.IncrementalAlterConfigsRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
			Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: key, Value: value, ConfigOperation: kafka.ConfigOperationSet}}}}})
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return r.Error
		}
	}
	return nil
}

func (f *kafkaGoFamily) transact(ctx context.Context, topic, txnID string, commit bool, recs []rec) error {
	return unsupported("kafka-go has no transactional producer")
}
