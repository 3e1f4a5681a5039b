package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// confluentFamily is confluent-kafka-go, which wraps librdkafka.
type confluentFamily struct {
	bootstrap string
	sec       *security // nil: PLAINTEXT
}

func newConfluentFamily(bootstrap string) *confluentFamily {
	return &confluentFamily{bootstrap: bootstrap}
}

func (f *confluentFamily) name() string { return "confluent-kafka-go" }
func (f *confluentFamily) version() string {
	_, lib := kafka.LibraryVersion()
	return moduleVersion("github.com/confluentinc/confluent-kafka-go/v2") + " (librdkafka " + lib + ")"
}
func (f *confluentFamily) nullAware() bool { return true }

func (f *confluentFamily) conf(extra kafka.ConfigMap) *kafka.ConfigMap {
	c := kafka.ConfigMap{
		"bootstrap.servers":        f.bootstrap,
		"client.id":                "samsa-compat-go",
		"allow.auto.create.topics": false,
		"log_level":                3,
	}
	if s := f.sec; s != nil {
		c["security.protocol"] = s.protocol
		if s.tls() {
			c["ssl.ca.location"] = s.caFile
			if s.certFile != "" {
				c["ssl.certificate.location"], c["ssl.key.location"] = s.certFile, s.keyFile
			}
		}
		if s.sasl() {
			c["sasl.mechanisms"] = s.mechanism
			if s.mechanism != "OAUTHBEARER" {
				c["sasl.username"], c["sasl.password"] = s.user, s.password
			}
		}
	}
	for k, v := range extra {
		c[k] = v
	}
	return &c
}

func (f *confluentFamily) withSecurity(s security) (securedFamily, error) {
	return &confluentFamily{bootstrap: s.bootstrap, sec: &s}, nil
}

// tokenSetter is a librdkafka handle: producer, consumer or admin client.
type tokenSetter interface {
	SetOAuthBearerToken(kafka.OAuthBearerToken) error
	Close()
}

// withToken hands a new handle the family's OAUTHBEARER token, if any,
// before it connects. librdkafka refuses a token whose lifetime has passed
// (SetOAuthBearerToken: "an expiration time in the past"), so the lifetime
// given is an hour from now for every token: it only schedules the
// client's refresh, and the broker judges the token's own exp claim.
func withToken[H tokenSetter](h H, err error, sec *security) (H, error) {
	if err != nil || sec == nil || sec.mechanism != "OAUTHBEARER" {
		return h, err
	}
	if err := h.SetOAuthBearerToken(kafka.OAuthBearerToken{TokenValue: sec.token, Principal: sec.user,
		Expiration: time.Now().Add(time.Hour)}); err != nil {
		h.Close()
		var zero H
		return zero, fmt.Errorf("SetOAuthBearerToken: %w", err)
	}
	return h, nil
}

func (f *confluentFamily) admin() (*kafka.AdminClient, error) {
	a, err := kafka.NewAdminClient(f.conf(nil))
	return withToken(a, err, f.sec)
}

func (f *confluentFamily) newProducer(extra kafka.ConfigMap) (*kafka.Producer, error) {
	p, err := kafka.NewProducer(f.conf(extra))
	return withToken(p, err, f.sec)
}

func (f *confluentFamily) newConsumer(extra kafka.ConfigMap) (*kafka.Consumer, error) {
	c, err := kafka.NewConsumer(f.conf(extra))
	if err != nil {
		return nil, err
	}
	if f.sec == nil || f.sec.mechanism != "OAUTHBEARER" {
		return c, nil
	}
	// Consumer.Close returns an error: not a tokenSetter.
	if err := c.SetOAuthBearerToken(kafka.OAuthBearerToken{TokenValue: f.sec.token, Principal: f.sec.user,
		Expiration: time.Now().Add(time.Hour)}); err != nil {
		c.Close()
		return nil, fmt.Errorf("SetOAuthBearerToken: %w", err)
	}
	return c, nil
}

// login starts a producer, which connects at once, and returns the first
// error it reports (librdkafka retries a refused login on its own; the
// first report is the one that tells): "all brokers down" follows the
// cause and is kept only when nothing else comes.
func (f *confluentFamily) login(ctx context.Context) error {
	p, err := f.newProducer(nil)
	if err != nil {
		return err
	}
	defer p.Close()
	var down error
	for {
		select {
		case ev := <-p.Events():
			if e, ok := ev.(kafka.Error); ok {
				if e.Code() != kafka.ErrAllBrokersDown {
					return e
				}
				down = e
			}
		case <-ctx.Done():
			if down != nil {
				return down
			}
			return fmt.Errorf("no error reported: %w", ctx.Err())
		}
	}
}

func (f *confluentFamily) authFailed(err error) bool {
	var e kafka.Error
	return errors.As(err, &e) && e.Code() == kafka.ErrAuthentication
}

func (f *confluentFamily) produceOne(ctx context.Context, topic string, r rec) error {
	return f.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, []rec{r})
}

func (f *confluentFamily) topicDenied(err error) bool {
	var e kafka.Error
	return errors.As(err, &e) && e.Code() == kafka.ErrTopicAuthorizationFailed
}

func (f *confluentFamily) createTopic(ctx context.Context, topic string, partitions int32) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	res, err := adm.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: int(partitions), ReplicationFactor: 1}})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return r.Error
		}
	}
	return nil
}

func (f *confluentFamily) deleteTopic(ctx context.Context, topic string) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	res, err := adm.DeleteTopics(ctx, []string{topic})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return r.Error
		}
	}
	return nil
}

func (f *confluentFamily) partitions(ctx context.Context, topic string) (int32, error) {
	adm, err := f.admin()
	if err != nil {
		return 0, err
	}
	defer adm.Close()
	md, err := adm.GetMetadata(&topic, false, 10000)
	if err != nil {
		return 0, err
	}
	t, ok := md.Topics[topic]
	if !ok || t.Error.Code() == kafka.ErrUnknownTopicOrPart || t.Error.Code() == kafka.ErrUnknownTopic {
		return -1, nil
	}
	if t.Error.Code() != kafka.ErrNoError {
		return 0, t.Error
	}
	return int32(len(t.Partitions)), nil
}

func toConfluent(topic string, r rec) *kafka.Message {
	m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.Partition},
		Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	return m
}

func fromConfluent(m *kafka.Message) rec {
	r := rec{Partition: m.TopicPartition.Partition, Offset: int64(m.TopicPartition.Offset), Key: m.Key, Value: m.Value,
		Timestamp: m.Timestamp.UnixMilli()}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{h.Key, h.Value})
	}
	return r
}

// send produces recs and waits for every delivery report.
func sendConfluent(ctx context.Context, p *kafka.Producer, topic string, recs []rec) error {
	dr := make(chan kafka.Event, len(recs))
	for _, r := range recs {
		if err := p.Produce(toConfluent(topic, r), dr); err != nil {
			return err
		}
	}
	for range recs {
		select {
		case ev := <-dr:
			if m, ok := ev.(*kafka.Message); ok && m.TopicPartition.Error != nil {
				return fmt.Errorf("delivery to partition %d: %w", m.TopicPartition.Partition, m.TopicPartition.Error)
			}
		case <-ctx.Done():
			return fmt.Errorf("delivery reports: %w", ctx.Err())
		}
	}
	return nil
}

func (f *confluentFamily) produce(ctx context.Context, topic string, o produceOpts, recs []rec) error {
	p, err := f.newProducer(kafka.ConfigMap{
		"acks":               strconv.Itoa(int(o.acks)),
		"compression.type":   o.codec,
		"enable.idempotence": o.idempotent,
		"linger.ms":          5,
	})
	if err != nil {
		return err
	}
	defer p.Close()
	go drainEvents(p)
	return sendConfluent(ctx, p, topic, recs)
}

// drainEvents empties a producer's event channel (errors, stats).
func drainEvents(p *kafka.Producer) {
	for range p.Events() {
	}
}

// consume reads until librdkafka's position in every partition is at its
// end: past the last record, or where it reports the partition's end
// (enable.partition.eof, which counts transaction markers).
func (f *confluentFamily) consume(ctx context.Context, topic string, ends map[int32]readEnd, readCommitted bool) (map[int32][]rec, error) {
	iso := "read_uncommitted"
	if readCommitted {
		iso = "read_committed"
	}
	c, err := f.newConsumer(kafka.ConfigMap{
		"group.id":             "compat-go-unused",
		"enable.auto.commit":   false,
		"isolation.level":      iso,
		"fetch.wait.max.ms":    100,
		"enable.partition.eof": true,
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var tps []kafka.TopicPartition
	pos, last := map[int32]int64{}, map[int32]int64{}
	for p := range ends {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.OffsetBeginning})
		pos[p], last[p] = 0, -1
	}
	if err := c.Assign(tps); err != nil {
		return nil, err
	}
	got := map[int32][]rec{}
	for behind(ends, pos, last) != "" {
		if ctx.Err() != nil {
			return got, fmt.Errorf("not at the end: %s: %w", behind(ends, pos, last), ctx.Err())
		}
		switch ev := c.Poll(100).(type) {
		case *kafka.Message:
			if ev.TopicPartition.Error != nil {
				return got, ev.TopicPartition.Error
			}
			p, o := ev.TopicPartition.Partition, int64(ev.TopicPartition.Offset)
			got[p] = append(got[p], fromConfluent(ev))
			pos[p], last[p] = max(pos[p], o+1), max(last[p], o)
		case kafka.PartitionEOF:
			p := ev.Partition
			pos[p] = max(pos[p], int64(ev.Offset))
		case kafka.Error:
			if ev.IsFatal() {
				return got, ev
			}
		}
	}
	return got, nil
}

type confluentMember struct {
	c         *kafka.Consumer
	topic     string
	mu        sync.Mutex
	next      map[int32]int64
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

func (f *confluentFamily) join(ctx context.Context, topic, group string, out chan<- rec) (member, error) {
	return f.joinWith(topic, out, kafka.ConfigMap{"group.id": group, "heartbeat.interval.ms": 500})
}

// joinKIP848 joins with librdkafka's group.protocol=consumer (KIP-848);
// the heartbeat interval is then the broker's to set.
func (f *confluentFamily) joinKIP848(ctx context.Context, topic, group string, out chan<- rec) (member, error) {
	return f.joinWith(topic, out, kafka.ConfigMap{"group.id": group, "group.protocol": "consumer"})
}

func (f *confluentFamily) joinWith(topic string, out chan<- rec, group kafka.ConfigMap) (member, error) {
	cm := kafka.ConfigMap{
		"enable.auto.commit": false,
		"auto.offset.reset":  "earliest",
		"fetch.wait.max.ms":  100,
	}
	for k, v := range group {
		cm[k] = v
	}
	c, err := f.newConsumer(cm)
	if err != nil {
		return nil, err
	}
	if err := c.Subscribe(topic, nil); err != nil {
		c.Close()
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	m := &confluentMember{c: c, topic: topic, next: map[int32]int64{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for pctx.Err() == nil {
			ev, ok := c.Poll(100).(*kafka.Message)
			if !ok || ev.TopicPartition.Error != nil {
				continue
			}
			select {
			case out <- fromConfluent(ev):
				m.mu.Lock()
				m.next[ev.TopicPartition.Partition] = int64(ev.TopicPartition.Offset) + 1
				m.mu.Unlock()
			case <-pctx.Done():
			}
		}
		m.closeErr = c.Close() // leaves the group
	}()
	return m, nil
}

func (m *confluentMember) commit(ctx context.Context) error {
	m.mu.Lock()
	var tps []kafka.TopicPartition
	for p, o := range m.next {
		tps = append(tps, kafka.TopicPartition{Topic: &m.topic, Partition: p, Offset: kafka.Offset(o)})
	}
	m.mu.Unlock()
	res, err := m.c.CommitOffsets(tps)
	if err != nil {
		return err
	}
	for _, tp := range res {
		if tp.Error != nil {
			return fmt.Errorf("partition %d: %w", tp.Partition, tp.Error)
		}
	}
	return nil
}

func (m *confluentMember) close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		<-m.done
	})
	return m.closeErr
}

func (f *confluentFamily) listOffset(ctx context.Context, topic string, partition int32, spec int64) (int64, error) {
	adm, err := f.admin()
	if err != nil {
		return 0, err
	}
	defer adm.Close()
	os := kafka.NewOffsetSpecForTimestamp(spec)
	switch spec {
	case -2:
		os = kafka.EarliestOffsetSpec
	case -1:
		os = kafka.LatestOffsetSpec
	}
	res, err := adm.ListOffsets(ctx, map[kafka.TopicPartition]kafka.OffsetSpec{{Topic: &topic, Partition: partition}: os})
	if err != nil {
		return 0, err
	}
	for tp, info := range res.ResultInfos {
		if *tp.Topic == topic && tp.Partition == partition {
			if info.Error.Code() != kafka.ErrNoError {
				return 0, info.Error
			}
			return int64(info.Offset), nil
		}
	}
	return 0, fmt.Errorf("partition not in the answer")
}

func (f *confluentFamily) setGroupOffsets(ctx context.Context, group, topic string, offsets map[int32]int64) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	var tps []kafka.TopicPartition
	for p, o := range offsets {
		tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.Offset(o)})
	}
	res, err := adm.AlterConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: tps}})
	if err != nil {
		return err
	}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, tp := range g.Partitions {
			if tp.Error != nil {
				return fmt.Errorf("partition %d: %w", tp.Partition, tp.Error)
			}
		}
	}
	return nil
}

func (f *confluentFamily) topicConfig(ctx context.Context, topic, key string) (string, error) {
	adm, err := f.admin()
	if err != nil {
		return "", err
	}
	defer adm.Close()
	res, err := adm.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic}})
	if err != nil {
		return "", err
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return "", r.Error
		}
		if e, ok := r.Config[key]; ok {
			return e.Value, nil
		}
	}
	return "", fmt.Errorf("%s not described", key)
}

func (f *confluentFamily) alterTopicConfig(ctx context.Context, topic, key, value string) error {
	adm, err := f.admin()
	if err != nil {
		return err
	}
	defer adm.Close()
	res, err := adm.IncrementalAlterConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: topic,
		Config: []kafka.ConfigEntry{{Name: key, Value: value, IncrementalOperation: kafka.AlterConfigOpTypeSet}}}})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return r.Error
		}
	}
	return nil
}

func (f *confluentFamily) transact(ctx context.Context, topic, txnID string, commit bool, recs []rec) error {
	p, err := f.newProducer(kafka.ConfigMap{
		"transactional.id":       txnID,
		"transaction.timeout.ms": 30000,
		"linger.ms":              5,
	})
	if err != nil {
		return err
	}
	defer p.Close()
	go drainEvents(p)
	if err := p.InitTransactions(ctx); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if err := p.BeginTransaction(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := sendConfluent(ctx, p, topic, recs); err != nil {
		p.AbortTransaction(ctx)
		return err
	}
	if commit {
		if err := p.CommitTransaction(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	}
	if err := p.AbortTransaction(ctx); err != nil {
		return fmt.Errorf("abort: %w", err)
	}
	return nil
}
