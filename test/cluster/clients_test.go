package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// goClient is one client family's way to produce a batch of records
// (acks=all, each value to the partition it names) and to read a topic's
// partitions from the start to the given end offsets.
type goClient struct {
	name    string
	produce func(ctx context.Context, addrs []string, topic string, recs []clientRecord) error
	consume func(ctx context.Context, addrs []string, topic string, ends map[int32]int64) (map[int32][]string, error)
}

type clientRecord struct {
	partition int32
	value     string
}

var goClients = []goClient{
	{"franz-go", franzProduce, franzConsume},
	{"sarama", saramaProduce, saramaConsume},
	{"kafka-go", kafkagoProduce, kafkagoConsume},
}

const clientPartitions = 3

// TestThreeBrokersGoClients runs every Go client family against three
// broker processes, RF 3, min ISR 2: each produces half its records
// acks=all, the leader of partition 0 is killed (SIGKILL), each produces
// the other half through the failover, the node comes back and rejoins
// every ISR, and each client reads its topic to the high watermark: every
// record exactly once, none extra.
func TestThreeBrokersGoClients(t *testing.T) {
	c := startCluster(t, 3, nil)
	const perPhase = 150
	want := map[string]map[int32][]string{}
	for _, gc := range goClients {
		topic := "clients-" + gc.name
		createTopic(t, c, topic, clientPartitions, 3, 2)
		want[gc.name] = map[int32][]string{}
	}
	for _, gc := range goClients {
		assertLeadersSpread(t, c, "clients-"+gc.name)
	}

	// phase produces every client's next records, the clients side by
	// side, so each rides the same failover.
	seeds := c.Addrs
	phase := func(n int) {
		errs := make([]error, len(goClients))
		took := make([]time.Duration, len(goClients))
		var wg sync.WaitGroup
		for ci, gc := range goClients {
			recs := make([]clientRecord, perPhase)
			for i := range recs {
				seq := n*perPhase + i
				recs[i] = clientRecord{int32(seq % clientPartitions), fmt.Sprintf("%s-%d", gc.name, seq)}
				want[gc.name][recs[i].partition] = append(want[gc.name][recs[i].partition], recs[i].value)
			}
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				start := time.Now()
				errs[ci] = gc.produce(ctx, seeds(), "clients-"+gc.name, recs)
				took[ci] = time.Since(start)
			})
		}
		wg.Wait()
		for ci, gc := range goClients {
			if errs[ci] != nil {
				t.Fatalf("%s phase %d: %v", gc.name, n, errs[ci])
			}
			t.Logf("%s phase %d: %d records acks=all in %v", gc.name, n, perPhase, took[ci].Round(time.Millisecond))
		}
	}
	phase(0)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	victim := leaderOf(ctx, c, "clients-franz-go", 0)
	if victim < 0 {
		t.Fatal("partition 0 has no leader")
	}
	// The producers start on all three nodes' addresses, the victim's
	// included, and every topic has a partition the victim leads.
	if err := c.Node(victim).Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed node %d, the leader of a partition of every topic", victim)
	phase(1)
	if err := c.Node(victim).Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c)
	for _, gc := range goClients {
		if err := waitFullISR(ctx, c, "clients-"+gc.name, 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, gc := range goClients {
		topic := "clients-" + gc.name
		ends := endOffsets(t, c, topic)
		got, err := gc.consume(ctx, c.Addrs(), topic, ends)
		if err != nil {
			t.Fatalf("%s consume: %v", gc.name, err)
		}
		for p := range want[gc.name] {
			slices.Sort(want[gc.name][p])
			slices.Sort(got[p])
		}
		if diff := cmp.Diff(want[gc.name], got); diff != "" {
			t.Errorf("%s read back (-produced +read):\n%s", gc.name, diff)
		}
	}
	assertAdminAcrossBrokers(t, c, "clients-franz-go")
}

// assertAdminAcrossBrokers: DescribeLogDirs answered by every broker
// lists its replica of each partition; DeleteRecords, sent where the
// client routes it (each partition's leader), moves the log start that
// ListOffsets then reports.
func assertAdminAcrossBrokers(t *testing.T, c *devcluster.Cluster, topic string) {
	t.Helper()
	adm := adminClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		found := 0
		for _, d := range dirs[n.ID] {
			found += len(d.Topics[topic])
		}
		if found != clientPartitions {
			t.Errorf("node %d's DescribeLogDirs lists %d replicas of %s, want %d", n.ID, found, topic, clientPartitions)
		}
	}
	to := kadm.Offsets{}
	for p := range int32(clientPartitions) {
		to.Add(kadm.Offset{Topic: topic, Partition: p, At: 10})
	}
	deleted, err := adm.DeleteRecords(ctx, to)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatalf("DeleteRecords: %v", err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	starts.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != 10 {
			t.Errorf("%s-%d starts at %d (%v) after DeleteRecords to 10", topic, o.Partition, o.Offset, o.Err)
		}
	})
}

// assertLeadersSpread checks that placement gave every node the
// leadership of one of the topic's three partitions.
func assertLeadersSpread(t *testing.T, c *devcluster.Cluster, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps, err := partitions(ctx, c.Node(1).Addr(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var leaders []int32
	for _, p := range ps {
		leaders = append(leaders, p.Leader)
	}
	slices.Sort(leaders)
	if !slices.Equal(leaders, []int32{1, 2, 3}) {
		t.Errorf("%s's leaders are %v, want one partition led by each node", topic, leaders)
	}
}

// endOffsets lists the high watermark of each partition of topic.
func endOffsets(t *testing.T, c *devcluster.Cluster, topic string) map[int32]int64 {
	t.Helper()
	adm := adminClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lo, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	var failed error
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			failed = o.Err
		}
		ends[o.Partition] = o.Offset
	})
	if failed != nil {
		t.Fatalf("end offsets of %s: %v", topic, failed)
	}
	return ends
}

func franzProduce(ctx context.Context, addrs []string, topic string, recs []clientRecord) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	rs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		rs[i] = &kgo.Record{Partition: r.partition, Value: []byte(r.value)}
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}

func franzConsume(ctx context.Context, addrs []string, topic string, ends map[int32]int64) (map[int32][]string, error) {
	offsets := map[int32]kgo.Offset{}
	for p := range ends {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := map[int32][]string{}
	next := map[int32]int64{}
	for !reached(next, ends) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return got, fmt.Errorf("at %v of %v: %w", next, ends, err)
		}
		if err := fs.Err(); err != nil {
			return got, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			next[r.Partition] = r.Offset + 1
		})
	}
	return got, nil
}

// reached says whether every partition's position is at its end offset.
func reached(next, ends map[int32]int64) bool {
	for p, end := range ends {
		if next[p] < end {
			return false
		}
	}
	return true
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.ClientID = "samsa-cluster-test"
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	// Ride out a failover: the session (3 s) and an election.
	cfg.Producer.Retry.Max = 40
	cfg.Producer.Retry.Backoff = 250 * time.Millisecond
	cfg.Metadata.Retry.Max = 40
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 50 * time.Millisecond
	return cfg
}

func saramaProduce(ctx context.Context, addrs []string, topic string, recs []clientRecord) error {
	p, err := sarama.NewSyncProducer(addrs, saramaConfig())
	if err != nil {
		return err
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, len(recs))
	for i, r := range recs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: r.partition, Value: sarama.StringEncoder(r.value)}
	}
	return p.SendMessages(msgs)
}

func saramaConsume(ctx context.Context, addrs []string, topic string, ends map[int32]int64) (map[int32][]string, error) {
	c, err := sarama.NewConsumer(addrs, saramaConfig())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	got := map[int32][]string{}
	for p, end := range ends {
		if end == 0 {
			continue
		}
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return got, err
		}
		for next := int64(0); next < end; {
			select {
			case m := <-pc.Messages():
				got[p] = append(got[p], string(m.Value))
				next = m.Offset + 1
			case err := <-pc.Errors():
				pc.Close()
				return got, err
			case <-ctx.Done():
				pc.Close()
				return got, fmt.Errorf("partition %d at %d of %d: %w", p, next, end, ctx.Err())
			}
		}
		pc.Close()
	}
	return got, nil
}

func kafkagoProduce(ctx context.Context, addrs []string, topic string, recs []clientRecord) error {
	w := &kafka.Writer{
		Addr:  kafka.TCP(addrs...),
		Topic: topic,
		// Metadata no older than the failover: the default keeps it 6 s.
		Transport:       &kafka.Transport{MetadataTTL: 250 * time.Millisecond},
		Balancer:        kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.WriterData.(int) }),
		RequiredAcks:    kafka.RequireAll,
		MaxAttempts:     40,
		WriteBackoffMin: 100 * time.Millisecond,
		WriteBackoffMax: 500 * time.Millisecond,
		BatchSize:       len(recs),
		BatchTimeout:    10 * time.Millisecond,
	}
	defer w.Close()
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafka.Message{Value: []byte(r.value), WriterData: int(r.partition)}
	}
	return w.WriteMessages(ctx, msgs...)
}

func kafkagoConsume(ctx context.Context, addrs []string, topic string, ends map[int32]int64) (map[int32][]string, error) {
	got := map[int32][]string{}
	for p, end := range ends {
		if end == 0 {
			continue
		}
		rd := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: int(p),
			MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
		for next := int64(0); next < end; {
			m, err := rd.ReadMessage(ctx)
			if err != nil {
				rd.Close()
				return got, fmt.Errorf("partition %d at %d of %d: %w", p, next, end, err)
			}
			got[p] = append(got[p], string(m.Value))
			next = m.Offset + 1
		}
		rd.Close()
	}
	return got, nil
}
