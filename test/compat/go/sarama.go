package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

type saramaFamily struct {
	bootstrap string
	sec       *security // nil: PLAINTEXT
}

func newSaramaFamily(bootstrap string) *saramaFamily { return &saramaFamily{bootstrap: bootstrap} }

func (f *saramaFamily) name() string    { return "sarama" }
func (f *saramaFamily) version() string { return moduleVersion("github.com/IBM/sarama") }
func (f *saramaFamily) nullAware() bool { return true }

func (f *saramaFamily) config() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.ClientID = "samsa-compat-go"
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	if f.sec != nil {
		f.secure(cfg)
	}
	return cfg
}

func (f *saramaFamily) withSecurity(s security) (securedFamily, error) {
	g := &saramaFamily{bootstrap: s.bootstrap, sec: &s}
	if s.tls() {
		// Read once: config() has no error to return.
		if _, err := s.tlsConfig(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// secure sets cfg's TLS and SASL. SASL goes through SaslHandshake v1 and
// SaslAuthenticate: sarama's default, v0, frames the exchange in bare
// tokens, which have no room for an error, so a refused login would be a
// closed connection rather than SASL_AUTHENTICATION_FAILED.
func (f *saramaFamily) secure(cfg *sarama.Config) {
	s := f.sec
	if s.tls() {
		tc, _ := s.tlsConfig() // checked by withSecurity
		cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, tc
	}
	if !s.sasl() {
		return
	}
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Version = sarama.SASLHandshakeV1
	cfg.Net.SASL.Mechanism = sarama.SASLMechanism(s.mechanism)
	cfg.Net.SASL.User, cfg.Net.SASL.Password = s.user, s.password
	switch s.mechanism {
	case "SCRAM-SHA-256":
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: scram.SHA256} }
	case "SCRAM-SHA-512":
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: scram.SHA512} }
	case "OAUTHBEARER":
		cfg.Net.SASL.TokenProvider = staticToken(s.token)
	}
}

// login is a new client: sarama fetches metadata when it starts.
func (f *saramaFamily) login(ctx context.Context) error {
	cfg := f.config()
	cfg.Metadata.Retry.Max = 0
	client, err := sarama.NewClient(seeds(f.bootstrap), cfg)
	if err != nil {
		return err
	}
	return client.Close()
}

func (f *saramaFamily) authFailed(err error) bool {
	return errors.Is(err, sarama.ErrSASLAuthenticationFailed)
}

func (f *saramaFamily) produceOne(ctx context.Context, topic string, r rec) error {
	return f.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, []rec{r})
}

// topicDenied looks into a SyncProducer's ProducerErrors, which does not
// unwrap.
func (f *saramaFamily) topicDenied(err error) bool {
	var pes sarama.ProducerErrors
	if errors.As(err, &pes) {
		for _, pe := range pes {
			if errors.Is(pe.Err, sarama.ErrTopicAuthorizationFailed) {
				return true
			}
		}
	}
	return errors.Is(err, sarama.ErrTopicAuthorizationFailed)
}

// xdgSCRAM is the SCRAM client sarama has its users supply (as its own
// examples do, with xdg-go/scram).
type xdgSCRAM struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (x *xdgSCRAM) Begin(user, pass, authzID string) error {
	c, err := x.hash.NewClient(user, pass, authzID)
	if err != nil {
		return err
	}
	x.conv = c.NewConversation()
	return nil
}

func (x *xdgSCRAM) Step(challenge string) (string, error) { return x.conv.Step(challenge) }
func (x *xdgSCRAM) Done() bool                            { return x.conv.Done() }

// staticToken hands sarama the same OAUTHBEARER token every time.
type staticToken string

func (t staticToken) Token() (*sarama.AccessToken, error) {
	return &sarama.AccessToken{Token: string(t)}, nil
}

// connected is a client whose connections to every broker are open: a
// producer on a fresh client can race sarama's lazy connect and resend a
// batch, a legitimate duplicate for a non-idempotent producer that an
// exact-count check must not see.
func (f *saramaFamily) connected(cfg *sarama.Config) (sarama.Client, error) {
	client, err := sarama.NewClient(seeds(f.bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, br := range client.Brokers() {
		if err := br.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
			client.Close()
			return nil, err
		}
		for {
			ok, err := br.Connected()
			if ok {
				break
			}
			if err != nil || time.Now().After(deadline) {
				client.Close()
				return nil, fmt.Errorf("broker %d not connected: %v", br.ID(), err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return client, nil
}

func (f *saramaFamily) admin() (sarama.ClusterAdmin, error) {
	return sarama.NewClusterAdmin(seeds(f.bootstrap), f.config())
}

func (f *saramaFamily) createTopic(ctx context.Context, topic string, partitions int32) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	return adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false)
}

func (f *saramaFamily) deleteTopic(ctx context.Context, topic string) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	return adm.DeleteTopic(topic)
}

func (f *saramaFamily) partitions(ctx context.Context, topic string) (int32, error) {
	adm, err := f.admin()
	if err != nil {
		return 0, err
	}
	defer adm.Close()
	md, err := adm.DescribeTopics([]string{topic})
	if err != nil {
		return 0, err
	}
	if len(md) != 1 {
		return 0, fmt.Errorf("%d topics described", len(md))
	}
	if errors.Is(md[0].Err, sarama.ErrUnknownTopicOrPartition) {
		return -1, nil
	}
	if md[0].Err != sarama.ErrNoError {
		return 0, md[0].Err
	}
	return int32(len(md[0].Partitions)), nil
}

func saramaCodec(codec string) sarama.CompressionCodec {
	switch codec {
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}

// saramaBytes keeps nil as a nil Encoder, which sarama sends as null.
func saramaBytes(b []byte) sarama.Encoder {
	if b == nil {
		return nil
	}
	return sarama.ByteEncoder(b)
}

func toSarama(topic string, r rec) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Partition: r.Partition, Key: saramaBytes(r.Key),
		Value: saramaBytes(r.Value), Timestamp: time.UnixMilli(r.Timestamp)}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	return m
}

func fromSarama(m *sarama.ConsumerMessage) rec {
	r := rec{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Timestamp: m.Timestamp.UnixMilli()}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{string(h.Key), h.Value})
	}
	return r
}

func (f *saramaFamily) produce(ctx context.Context, topic string, o produceOpts, recs []rec) error {
	cfg := f.config()
	cfg.Producer.RequiredAcks = sarama.RequiredAcks(o.acks)
	cfg.Producer.Compression = saramaCodec(o.codec)
	if o.idempotent {
		cfg.Producer.Idempotent = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Net.MaxOpenRequests = 1
	}
	client, err := f.connected(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, len(recs))
	for i, r := range recs {
		msgs[i] = toSarama(topic, r)
	}
	err = p.SendMessages(msgs)
	// ProducerErrors says only how many failed: the first one's cause too.
	var pes sarama.ProducerErrors
	if errors.As(err, &pes) && len(pes) > 0 {
		return fmt.Errorf("%w (the first: %v)", err, pes[0].Err)
	}
	return err
}

// consume: a sarama PartitionConsumer tells no position and drops control
// records unseen, so a partition is read when the record at ends[p].last
// has come (readEnd.reached).
func (f *saramaFamily) consume(ctx context.Context, topic string, ends map[int32]readEnd, readCommitted bool) (map[int32][]rec, error) {
	cfg := f.config()
	if readCommitted {
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	c, err := sarama.NewConsumer(seeds(f.bootstrap), cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// Every partition consumer starts before any is read: sarama batches
	// new subscriptions.
	pcs := map[int32]sarama.PartitionConsumer{}
	for p := range ends {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", p, err)
		}
		pcs[p] = pc
	}
	got := map[int32][]rec{}
	for p, e := range ends {
		pc := pcs[p]
		last := int64(-1)
		for !e.reached(-1, last) {
			select {
			case m := <-pc.Messages():
				got[p] = append(got[p], fromSarama(m))
				last = max(last, m.Offset)
			case err := <-pc.Errors():
				return got, fmt.Errorf("partition %d: %w", p, err)
			case <-ctx.Done():
				return got, fmt.Errorf("partition %d: last record read at %d, want %d (end offset %d): %w", p, last, e.last, e.end, ctx.Err())
			}
		}
	}
	return got, nil
}

type saramaMember struct {
	cg        sarama.ConsumerGroup
	cancel    context.CancelFunc
	done      chan struct{}
	mu        sync.Mutex
	sess      sarama.ConsumerGroupSession
	closeOnce sync.Once
	out       chan<- rec
	ctx       context.Context
}

func (m *saramaMember) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	m.sess = s
	m.mu.Unlock()
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (m *saramaMember) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-c.Messages():
			if !ok {
				return nil
			}
			select {
			case m.out <- fromSarama(msg):
				s.MarkMessage(msg, "")
			case <-s.Context().Done():
				return nil
			}
		case <-s.Context().Done():
			return nil
		}
	}
}

func (f *saramaFamily) join(ctx context.Context, topic, group string, out chan<- rec) (member, error) {
	cg, err := sarama.NewConsumerGroup(seeds(f.bootstrap), group, f.config())
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	m := &saramaMember{cg: cg, cancel: cancel, done: make(chan struct{}), out: out, ctx: cctx}
	go func() {
		defer close(m.done)
		for cctx.Err() == nil {
			if err := cg.Consume(cctx, []string{topic}, m); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return m, nil
}

func (m *saramaMember) commit(ctx context.Context) error {
	m.mu.Lock()
	s := m.sess
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("no group session")
	}
	s.Commit()
	return nil
}

func (m *saramaMember) close() error {
	var err error
	m.closeOnce.Do(func() {
		m.cancel()
		err = m.cg.Close() // leaves the group
		<-m.done
	})
	return err
}

func (f *saramaFamily) listOffset(ctx context.Context, topic string, partition int32, spec int64) (int64, error) {
	client, err := sarama.NewClient(seeds(f.bootstrap), f.config())
	if err != nil {
		return 0, err
	}
	defer client.Close()
	return client.GetOffset(topic, partition, spec)
}

// setGroupOffsets uses sarama's offset manager: sarama's ClusterAdmin has
// no call to alter a group's offsets.
func (f *saramaFamily) setGroupOffsets(ctx context.Context, group, topic string, offsets map[int32]int64) error {
	client, err := sarama.NewClient(seeds(f.bootstrap), f.config())
	if err != nil {
		return err
	}
	defer client.Close()
	om, err := sarama.NewOffsetManagerFromClient(group, client)
	if err != nil {
		return err
	}
	for p, o := range offsets {
		pom, err := om.ManagePartition(topic, p)
		if err != nil {
			om.Close()
			return err
		}
		pom.ResetOffset(o, "")
	}
	om.Commit()
	return om.Close()
}

func (f *saramaFamily) topicConfig(ctx context.Context, topic, key string) (string, error) {
	adm, err := f.admin()
	if err != nil {
		return "", err
	}
	defer adm.Close()
	entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic})
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name == key {
			return e.Value, nil
		}
	}
	return "", fmt.Errorf("%s not described", key)
}

func (f *saramaFamily) alterTopicConfig(ctx context.Context, topic, key, value string) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	return adm.IncrementalAlterConfig(sarama.TopicResource, topic,
		map[string]sarama.IncrementalAlterConfigsEntry{key: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &value}}, false)
}

func (f *saramaFamily) transact(ctx context.Context, topic, txnID string, commit bool, recs []rec) error {
	cfg := f.config()
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Transaction.ID = txnID
	cfg.Net.MaxOpenRequests = 1
	client, err := f.connected(cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		return err
	}
	msgs := make([]*sarama.ProducerMessage, len(recs))
	for i, r := range recs {
		msgs[i] = toSarama(topic, r)
	}
	if err := p.SendMessages(msgs); err != nil {
		p.AbortTxn()
		return err
	}
	if commit {
		return p.CommitTxn()
	}
	return p.AbortTxn()
}
