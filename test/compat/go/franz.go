package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// franzFamily is franz-go; old holds every client to the Kafka 2.1
// protocol (kgo.MaxVersions(kversion.V2_1_0())).
type franzFamily struct {
	bootstrap string
	old       bool
	sec       *security // nil: PLAINTEXT
}

func newFranzFamily(bootstrap string, old bool) *franzFamily {
	return &franzFamily{bootstrap: bootstrap, old: old}
}

func (f *franzFamily) name() string {
	if f.old {
		return "franz-go (Kafka 2.1 protocol)"
	}
	return "franz-go"
}

func (f *franzFamily) version() string { return moduleVersion("github.com/twmb/franz-go") }
func (f *franzFamily) nullAware() bool { return true }

func (f *franzFamily) client(opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{kgo.SeedBrokers(seeds(f.bootstrap)...), kgo.ClientID("samsa-compat-go")}
	if f.old {
		base = append(base, kgo.MaxVersions(kversion.V2_1_0()))
	}
	if f.sec != nil {
		sec, err := f.securityOpts()
		if err != nil {
			return nil, err
		}
		base = append(base, sec...)
	}
	return kgo.NewClient(append(base, opts...)...)
}

func (f *franzFamily) withSecurity(s security) (securedFamily, error) {
	return &franzFamily{bootstrap: s.bootstrap, old: f.old, sec: &s}, nil
}

func (f *franzFamily) securityOpts() ([]kgo.Opt, error) {
	s := f.sec
	var opts []kgo.Opt
	if s.tls() {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.sasl() {
		switch s.mechanism {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: s.user, Pass: s.password}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: s.user, Pass: s.password}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: s.user, Pass: s.password}.AsSha512Mechanism()))
		case "OAUTHBEARER":
			opts = append(opts, kgo.SASL(oauth.Auth{Token: s.token}.AsMechanism()))
		default:
			return nil, fmt.Errorf("mechanism %s", s.mechanism)
		}
	}
	return opts, nil
}

// login is one Metadata request, not retried.
func (f *franzFamily) login(ctx context.Context) error {
	cl, err := f.client(kgo.RequestRetries(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

func (f *franzFamily) authFailed(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed)
}

func (f *franzFamily) produceOne(ctx context.Context, topic string, r rec) error {
	return f.produce(ctx, topic, produceOpts{codec: "none", acks: -1}, []rec{r})
}

func (f *franzFamily) topicDenied(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed)
}

func (f *franzFamily) admin() (*kadm.Client, func(), error) {
	cl, err := f.client()
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

func (f *franzFamily) createTopic(ctx context.Context, topic string, partitions int32) error {
	adm, done, err := f.admin()
	if err != nil {
		return err
	}
	defer done()
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

func (f *franzFamily) deleteTopic(ctx context.Context, topic string) error {
	adm, done, err := f.admin()
	if err != nil {
		return err
	}
	defer done()
	resp, err := adm.DeleteTopic(ctx, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

func (f *franzFamily) partitions(ctx context.Context, topic string) (int32, error) {
	adm, done, err := f.admin()
	if err != nil {
		return 0, err
	}
	defer done()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return 0, err
	}
	td, ok := md.Topics[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return -1, nil
	}
	if td.Err != nil {
		return 0, td.Err
	}
	return int32(len(td.Partitions)), nil
}

func franzCodec(codec string) kgo.CompressionCodec {
	switch codec {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

func toFranz(topic string, r rec) *kgo.Record {
	kr := &kgo.Record{Topic: topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)}
	for _, h := range r.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return kr
}

func fromFranz(kr *kgo.Record) rec {
	r := rec{Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp.UnixMilli()}
	for _, h := range kr.Headers {
		r.Headers = append(r.Headers, header{h.Key, h.Value})
	}
	return r
}

func (f *franzFamily) produce(ctx context.Context, topic string, o produceOpts, recs []rec) error {
	opts := []kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(franzCodec(o.codec))}
	switch {
	case o.idempotent:
		// franz-go's default: idempotent, acks all.
	case o.acks == 0:
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.NoAck()))
	case o.acks == 1:
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()))
	default:
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	cl, err := f.client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = toFranz(topic, r)
	}
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		return err
	}
	return cl.Flush(ctx)
}

// consume keeps control records (kgo.KeepControlRecords) so that its
// position moves past transaction markers as the client's does; they are
// not returned.
func (f *franzFamily) consume(ctx context.Context, topic string, ends map[int32]readEnd, readCommitted bool) (map[int32][]rec, error) {
	offsets := map[int32]kgo.Offset{}
	for p := range ends {
		offsets[p] = kgo.NewOffset().At(0)
	}
	iso := kgo.ReadUncommitted()
	if readCommitted {
		iso = kgo.ReadCommitted()
	}
	cl, err := f.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}), kgo.FetchIsolationLevel(iso),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.KeepControlRecords())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := map[int32][]rec{}
	pos, last := map[int32]int64{}, map[int32]int64{}
	for p := range ends {
		pos[p], last[p] = 0, -1
	}
	for behind(ends, pos, last) != "" {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got, fmt.Errorf("not at the end: %s: %w", behind(ends, pos, last), ctx.Err())
		}
		var ferr error
		fs.EachError(func(topic string, p int32, err error) { ferr = fmt.Errorf("%s/%d: %w", topic, p, err) })
		if ferr != nil {
			return got, ferr
		}
		fs.EachRecord(func(kr *kgo.Record) {
			pos[kr.Partition] = max(pos[kr.Partition], kr.Offset+1)
			if kr.Attrs.IsControl() {
				return
			}
			last[kr.Partition] = max(last[kr.Partition], kr.Offset)
			got[kr.Partition] = append(got[kr.Partition], fromFranz(kr))
		})
	}
	return got, nil
}

type franzMember struct {
	cl        *kgo.Client
	mu        sync.Mutex
	delivered []*kgo.Record
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

func (f *franzFamily) join(ctx context.Context, topic, group string, out chan<- rec) (member, error) {
	return f.joinWith(topic, group, out)
}

// joinKIP848 joins with the consumer group protocol: the broker assigns.
func (f *franzFamily) joinKIP848(ctx context.Context, topic, group string, out chan<- rec) (member, error) {
	if f.old {
		return nil, unsupported("the Kafka 2.1 protocol has no ConsumerGroupHeartbeat (KIP-848 came with Kafka 3.7/4.0)")
	}
	return f.joinWith(topic, group, out, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
}

func (f *franzFamily) joinWith(topic, group string, out chan<- rec, extra ...kgo.Opt) (member, error) {
	opts := append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.HeartbeatInterval(500 * time.Millisecond),
		kgo.FetchMaxWait(200 * time.Millisecond)}, extra...)
	cl, err := f.client(opts...)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	m := &franzMember{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for pctx.Err() == nil {
			fs := cl.PollFetches(pctx)
			fs.EachRecord(func(kr *kgo.Record) {
				select {
				case out <- fromFranz(kr):
					m.mu.Lock()
					m.delivered = append(m.delivered, kr)
					m.mu.Unlock()
				case <-pctx.Done():
				}
			})
		}
	}()
	return m, nil
}

func (m *franzMember) commit(ctx context.Context) error {
	m.mu.Lock()
	recs := append([]*kgo.Record(nil), m.delivered...)
	m.mu.Unlock()
	return m.cl.CommitRecords(ctx, recs...)
}

func (m *franzMember) close() error {
	m.closeOnce.Do(func() {
		m.cancel()
		<-m.done
		m.cl.Close() // leaves the group
	})
	return nil
}

func (f *franzFamily) listOffset(ctx context.Context, topic string, partition int32, spec int64) (int64, error) {
	adm, done, err := f.admin()
	if err != nil {
		return 0, err
	}
	defer done()
	var lo kadm.ListedOffsets
	switch spec {
	case -2:
		lo, err = adm.ListStartOffsets(ctx, topic)
	case -1:
		lo, err = adm.ListEndOffsets(ctx, topic)
	default:
		lo, err = adm.ListOffsetsAfterMilli(ctx, spec, topic)
	}
	if err != nil {
		return 0, err
	}
	o, ok := lo.Lookup(topic, partition)
	if !ok {
		return 0, fmt.Errorf("partition not in the answer")
	}
	return o.Offset, o.Err
}

func (f *franzFamily) setGroupOffsets(ctx context.Context, group, topic string, offsets map[int32]int64) error {
	adm, done, err := f.admin()
	if err != nil {
		return err
	}
	defer done()
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.AddOffset(topic, p, o, -1)
	}
	return adm.CommitAllOffsets(ctx, group, os)
}

func (f *franzFamily) topicConfig(ctx context.Context, topic, key string) (string, error) {
	adm, done, err := f.admin()
	if err != nil {
		return "", err
	}
	defer done()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return "", err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return "", err
	}
	if rc.Err != nil {
		return "", rc.Err
	}
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue(), nil
		}
	}
	return "", fmt.Errorf("%s not described", key)
}

func (f *franzFamily) alterTopicConfig(ctx context.Context, topic, key, value string) error {
	adm, done, err := f.admin()
	if err != nil {
		return err
	}
	defer done()
	alter := []kadm.AlterConfig{{Name: key, Value: &value}}
	var resp kadm.AlterConfigsResponses
	if f.old {
		// IncrementalAlterConfigs is Kafka 2.3; the 2.1 protocol has the
		// legacy AlterConfigs, which replaces the topic's overrides.
		resp, err = adm.AlterTopicConfigsState(ctx, alter, topic)
	} else {
		resp, err = adm.AlterTopicConfigs(ctx, alter, topic)
	}
	if err != nil {
		return err
	}
	r, err := resp.On(topic, nil)
	if err != nil {
		return err
	}
	return r.Err
}

func (f *franzFamily) transact(ctx context.Context, topic, txnID string, commit bool, recs []rec) error {
	cl, err := f.client(kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = toFranz(topic, r)
	}
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		cl.EndTransaction(ctx, kgo.TryAbort)
		return err
	}
	end := kgo.TryAbort
	if commit {
		end = kgo.TryCommit
	}
	return cl.EndTransaction(ctx, end)
}
