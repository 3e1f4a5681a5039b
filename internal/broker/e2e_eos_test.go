package broker

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// eosSentinel marks the end of a partition for readToSentinel: a
// non-transactional record written once every transaction under test has
// ended, so a read_committed reader that reaches it has seen everything
// committed before it.
const eosSentinel = "eos-sentinel"

// eosSeed picks a seed and logs it so a failing run can be replayed by
// hard-coding the logged value.
func eosSeed(t *testing.T) *rand.Rand {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewSource(seed))
}

// eosValues builds broker config values with the overrides the EOS tests
// need on top of Samsa's defaults.
func eosValues(t testing.TB, overrides map[string]string) Config {
	t.Helper()
	all := map[string]string{"group.initial.rebalance.delay.ms": "0"}
	for k, v := range overrides {
		all[k] = v
	}
	v, err := LoadConfig("", all)
	if err != nil {
		t.Fatal(err)
	}
	return Config{LogDir: t.TempDir(), Values: v}
}

// writeSentinels appends one sentinel record to each partition of topic.
func writeSentinels(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	cl := newFranz(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	for p := range partitions {
		r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(eosSentinel)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("sentinel on %s/%d: %v", topic, p, err)
		}
	}
}

// readToSentinel reads every partition of topic from the start at the
// given isolation level until it meets the sentinel on each one, and
// returns the records before the sentinels, per partition in log order.
func readToSentinel(t *testing.T, addr, topic string, partitions int32, level kgo.IsolationLevel) map[int32][]*kgo.Record {
	t.Helper()
	cl := newFranz(t, addr, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(level),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	got := map[int32][]*kgo.Record{}
	done := map[int32]bool{}
	for len(done) < int(partitions) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: sentinels seen on %d of %d partitions: %v", topic, len(done), partitions, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("read %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if done[r.Partition] {
				return
			}
			if string(r.Value) == eosSentinel {
				done[r.Partition] = true
				return
			}
			got[r.Partition] = append(got[r.Partition], r)
		})
	}
	return got
}

// listOffset asks for the end offset of a partition at an isolation level:
// the high watermark for read_uncommitted, the last stable offset for
// read_committed.
func listOffset(t *testing.T, cl *kgo.Client, topic string, p int32, level int8) int64 {
	t.Helper()
	off, err := tryListOffset(cl, topic, p, level)
	if err != nil {
		t.Fatalf("list offsets %s/%d (isolation %d): %v", topic, p, level, err)
	}
	return off
}

func tryListOffset(cl *kgo.Client, topic string, p int32, level int8) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = level
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = p
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("malformed response %+v", resp)
	}
	rpr := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rpr.ErrorCode); err != nil {
		return 0, err
	}
	return rpr.Offset, nil
}

const (
	readUncommitted int8 = 0
	readCommitted   int8 = 1
)

// TestEOSConsumeTransformProduce: a consume-transform-produce processor
// built on franz-go's GroupTransactSession is killed mid-transaction many
// times, each time replaced by a new one with the same transactional ID;
// the committed output holds every input exactly once.
func TestEOSConsumeTransformProduce(t *testing.T) {
	const (
		inputs = 300
		kills  = 12
		group  = "eos-ctp"
		txnID  = "eos-ctp-tx"
	)
	rng := eosSeed(t)
	b := startBrokerWith(t, eosValues(t, map[string]string{"transaction.max.timeout.ms": "60000"}))
	createTopic(t, b, "eos-in", 3)
	createTopic(t, b, "eos-out", 3)

	in := make([]*kgo.Record, inputs)
	for i := range in {
		id := fmt.Sprintf("id-%04d", i)
		in[i] = &kgo.Record{Topic: "eos-in", Key: []byte(id), Value: []byte(id)}
	}
	{
		cl := newFranz(t, b.Addr())
		ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
		if err := cl.ProduceSync(ctx, in...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cancel()
		cl.Close()
	}
	adm := newFranz(t, b.Addr())
	ends := map[int32]int64{}
	for p := range int32(3) {
		ends[p] = listOffset(t, adm, "eos-in", p, readUncommitted)
	}
	// caughtUp reports whether the group's committed offsets reach the
	// end of every input partition.
	caughtUp := func(ctx context.Context) bool {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Group = group
		req.RequireStable = true
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic = "eos-in"
		rt.Partitions = []int32{0, 1, 2}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, adm)
		if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 {
			return false
		}
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 || p.Offset != ends[p.Partition] {
				return false
			}
		}
		return len(resp.Topics[0].Partitions) == 3
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// run is one processor incarnation. With killAt > 0 it closes its
	// client without ending the transaction once it has produced killAt
	// records in this incarnation; with killAt == 0 it runs until the
	// group has committed all input.
	run := func(incarnation, killAt int) {
		s, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(b.Addr()),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics("eos-in"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.TransactionalID(txnID),
			kgo.TransactionTimeout(30*time.Second),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RequireStableFetchOffsets(),
			kgo.DefaultProduceTopic("eos-out"),
			kgo.FetchMaxWait(200*time.Millisecond),
		)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		produced, commits := 0, 0
		defer func() {
			t.Logf("incarnation %d: %d records produced, %d transactions committed", incarnation, produced, commits)
		}()
		for {
			if caughtUp(ctx) {
				return
			}
			fs := s.PollRecords(ctx, 1+rng.Intn(15))
			if ctx.Err() != nil {
				t.Fatalf("incarnation %d: %v", incarnation, ctx.Err())
			}
			fs.EachError(func(topic string, p int32, err error) {
				t.Logf("incarnation %d: fetch %s/%d: %v", incarnation, topic, p, err)
			})
			if err := s.Begin(); err != nil {
				t.Fatalf("incarnation %d: begin: %v", incarnation, err)
			}
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				prodErr error
			)
			killed := false
			fs.EachRecord(func(r *kgo.Record) {
				if killed {
					return
				}
				wg.Add(1)
				out := &kgo.Record{Key: r.Value, Value: []byte("out-" + string(r.Value))}
				s.Produce(ctx, out, func(_ *kgo.Record, err error) {
					defer wg.Done()
					if err != nil {
						mu.Lock()
						prodErr = errors.Join(prodErr, err)
						mu.Unlock()
					}
				})
				produced++
				if killAt > 0 && produced >= killAt {
					killed = true
				}
			})
			if killed {
				// Abrupt end: the transaction is left open, usually
				// with its records on the broker, sometimes with
				// them still in flight.
				if rng.Intn(4) != 0 {
					wg.Wait()
				}
				return
			}
			wg.Wait()
			if prodErr != nil {
				t.Logf("incarnation %d: produce: %v", incarnation, prodErr)
			}
			committed, err := s.End(ctx, kgo.TryCommit)
			if err != nil {
				t.Fatalf("incarnation %d: end: %v", incarnation, err)
			}
			if committed {
				commits++
			}
		}
	}
	for i := range kills {
		run(i, 1+rng.Intn(40))
	}
	run(kills, 0)

	writeSentinels(t, b.Addr(), "eos-out", 3)
	// The kills must have left aborted output behind, or the test proved
	// nothing about filtering it.
	written := 0
	for _, recs := range readToSentinel(t, b.Addr(), "eos-out", 3, kgo.ReadUncommitted()) {
		written += len(recs)
	}
	t.Logf("%d records written to the output, %d inputs", written, inputs)
	if written <= inputs {
		t.Fatalf("only %d output records written for %d inputs: no kill left an aborted transaction", written, inputs)
	}
	seen := map[string]int{}
	for _, recs := range readToSentinel(t, b.Addr(), "eos-out", 3, kgo.ReadCommitted()) {
		for _, r := range recs {
			seen[string(r.Value)]++
		}
	}
	for i := range inputs {
		want := fmt.Sprintf("out-id-%04d", i)
		if n := seen[want]; n != 1 {
			t.Errorf("%s appears %d times in the committed output", want, n)
		}
		delete(seen, want)
	}
	for v, n := range seen {
		t.Errorf("unexpected output %q (%d times)", v, n)
	}
}

// TestEOSAbortedInvisible: two transactional producers interleave
// committed and aborted transactions over two partitions. While a
// transaction is open the last stable offset sits at its first offset;
// it moves once the transaction ends. read_committed readers see only
// committed records, read_uncommitted readers see all of them.
func TestEOSAbortedInvisible(t *testing.T) {
	b := startBroker(t)
	const topic = "eos-ab"
	createTopic(t, b, topic, 2)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	newTxn := func(id string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID(id),
			kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	a, c := newTxn("eos-ab-a"), newTxn("eos-ab-c")
	adm := newFranz(t, b.Addr())

	var wantCommitted, wantAll []string
	// produce writes one record and returns its offset; the value says
	// whether its transaction will commit.
	produce := func(cl *kgo.Client, p int32, v string, commit bool) int64 {
		t.Helper()
		v = fmt.Sprintf("%s commit=%v", v, commit)
		r, err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(v)}).First()
		if err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
		wantAll = append(wantAll, v)
		if commit {
			wantCommitted = append(wantCommitted, v)
		}
		return r.Offset
	}
	begin := func(cl *kgo.Client) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	end := func(cl *kgo.Client, commit bool) {
		t.Helper()
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction (commit=%v): %v", commit, err)
		}
	}
	checkLSO := func(p int32, want int64, when string) {
		t.Helper()
		if got := listOffset(t, adm, topic, p, readCommitted); got != want {
			t.Fatalf("%s: LSO of %s/%d = %d, want %d", when, topic, p, got, want)
		}
	}
	checkStable := func(when string) {
		t.Helper()
		for p := range int32(2) {
			checkLSO(p, listOffset(t, adm, topic, p, readUncommitted), when)
		}
	}

	// Round 1: a (commit) opens first on p0, c (abort) second on p0 and p1.
	begin(a)
	begin(c)
	a0 := produce(a, 0, "r1-a-0", true)
	c0 := produce(c, 0, "r1-c-0", false)
	c1 := produce(c, 1, "r1-c-1", false)
	produce(a, 0, "r1-a-0b", true)
	checkLSO(0, a0, "a and c open")
	checkLSO(1, c1, "c open on p1")
	end(a, true)
	checkLSO(0, c0, "a committed, c open")
	checkLSO(1, c1, "a committed, c open on p1")
	end(c, false)
	checkStable("round 1 ended")

	// Round 2: c (commit) opens first, a (abort) second; c ends first.
	begin(c)
	begin(a)
	c1 = produce(c, 1, "r2-c-1", true)
	a1 := produce(a, 1, "r2-a-1", false)
	a0 = produce(a, 0, "r2-a-0", false)
	produce(c, 0, "r2-c-0", true)
	checkLSO(0, a0, "round 2 both open on p0")
	checkLSO(1, c1, "round 2 both open on p1")
	end(c, true)
	checkLSO(1, a1, "c committed, a open on p1")
	checkLSO(0, a0, "c committed, a open on p0")
	end(a, false)
	checkStable("round 2 ended")

	// Round 3: an aborted transaction alone, then a committed one.
	begin(a)
	produce(a, 0, "r3-a-0", false)
	produce(a, 1, "r3-a-1", false)
	end(a, false)
	begin(c)
	produce(c, 0, "r3-c-0", true)
	end(c, true)
	checkStable("round 3 ended")

	writeSentinels(t, b.Addr(), topic, 2)
	values := func(level kgo.IsolationLevel) map[string]int {
		got := map[string]int{}
		for _, recs := range readToSentinel(t, b.Addr(), topic, 2, level) {
			for _, r := range recs {
				got[string(r.Value)]++
			}
		}
		return got
	}
	compare := func(name string, want []string, got map[string]int) {
		t.Helper()
		for _, v := range want {
			if got[v] != 1 {
				t.Errorf("%s: %q seen %d times, want once", name, v, got[v])
			}
			delete(got, v)
		}
		for v, n := range got {
			t.Errorf("%s: unexpected %q (%d times)", name, v, n)
		}
	}
	compare("read_committed", wantCommitted, values(kgo.ReadCommitted()))
	compare("read_uncommitted", wantAll, values(kgo.ReadUncommitted()))
}

// cuttingDialer dials real TCP connections that close themselves after a
// random number of writes, the last write reaching the broker, so the
// client loses the response to a request the broker has handled. It
// stops cutting after budget cuts.
type cuttingDialer struct {
	mu     sync.Mutex
	rng    *rand.Rand
	budget int
	cuts   int
	// produceCuts counts cuts right after a Produce request was sent:
	// the ones that make the client resend a batch the broker has.
	produceCuts int
}

func (d *cuttingDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cuts >= d.budget {
		return nc, nil
	}
	return &cutConn{Conn: nc, d: d, writesLeft: 2 + d.rng.Intn(8)}, nil
}

type cutConn struct {
	net.Conn
	d          *cuttingDialer
	mu         sync.Mutex
	writesLeft int
}

func (c *cutConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	// A request frame: 4-byte length, then the api key (0 is Produce).
	produce := len(p) >= 6 && p[4] == 0 && p[5] == 0
	c.mu.Lock()
	c.writesLeft--
	cut := c.writesLeft == 0
	c.mu.Unlock()
	if cut {
		c.d.mu.Lock()
		c.d.cuts++
		if produce {
			c.d.produceCuts++
		}
		c.d.mu.Unlock()
		c.Conn.Close()
	}
	return n, err
}

// TestEOSIdempotentConnectionCuts: an idempotent producer with several
// requests in flight loses its connections again and again right after
// sending; what lands in the partition is every record exactly once, in
// the order produced.
func TestEOSIdempotentConnectionCuts(t *testing.T) {
	const (
		topic = "eos-cuts"
		total = 3000
	)
	rng := eosSeed(t)
	b := startBroker(t)
	createTopic(t, b, topic, 1)
	d := &cuttingDialer{rng: rng, budget: 40}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic(topic),
		kgo.Dialer(d.dial),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Idempotent franz-go keeps up to 5 produce requests in flight.
		kgo.ProducerBatchMaxBytes(512),
		kgo.ProducerLinger(0),
		kgo.RetryBackoffFn(func(int) time.Duration { return 5 * time.Millisecond }),
		kgo.RecordDeliveryTimeout(e2eTimeout),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i := range total {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d records failed, first: %v", len(errs), errs[0])
	}
	d.mu.Lock()
	cuts, produceCuts := d.cuts, d.produceCuts
	d.mu.Unlock()
	t.Logf("%d connection cuts, %d right after a produce request", cuts, produceCuts)
	if produceCuts == 0 {
		t.Fatal("no connection was cut after a produce request; the test exercised nothing")
	}

	writeSentinels(t, b.Addr(), topic, 1)
	got := readToSentinel(t, b.Addr(), topic, 1, kgo.ReadUncommitted())[0]
	next := 0
	for _, r := range got {
		v, err := strconv.Atoi(string(r.Value))
		if err != nil {
			t.Fatalf("offset %d: value %q", r.Offset, r.Value)
		}
		if v != next {
			t.Fatalf("offset %d holds record %d, want %d (duplicate or gap)", r.Offset, v, next)
		}
		next++
	}
	if next != total {
		t.Fatalf("partition holds %d records, want %d", next, total)
	}
}

// restartSamePort closes b and starts a broker on the same log dir and
// the same port, so clients seeded with the old address find it again.
func restartSamePort(t *testing.T, b *Broker, cfg Config) *Broker {
	t.Helper()
	_, portText, err := net.SplitHostPort(b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.Listeners = []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: port}}
	return startBrokerWith(t, cfg)
}

// TestEOSBrokerRestartMidTransaction: a broker restarts while a
// transaction is open. A producer that carries on ends it cleanly; a
// producer that went away leaves it to the coordinator's timeout. Either
// way the last stable offset catches up with the high watermark.
func TestEOSBrokerRestartMidTransaction(t *testing.T) {
	t.Run("producer-ends", func(t *testing.T) {
		cfg := eosValues(t, nil)
		b := startBrokerWith(t, cfg)
		const topic = "eos-restart-a"
		createTopic(t, b, topic, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 2*e2eTimeout)
		defer cancel()
		prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("eos-restart-a"),
			kgo.DefaultProduceTopic(topic))
		if err != nil {
			t.Fatal(err)
		}
		defer prod.Close()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint("a-", i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		b = restartSamePort(t, b, cfg)
		adm := newFranz(t, b.Addr())

		endErr := prod.EndTransaction(ctx, kgo.TryCommit)
		committed := endErr == nil
		t.Logf("end transaction after restart: committed=%v", committed)
		if endErr != nil {
			// The transaction may be lost to the producer; a new
			// producer with the same ID must fence and abort it.
			t.Logf("end transaction after restart: %v", endErr)
			prod.Close()
			again, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("eos-restart-a"),
				kgo.DefaultProduceTopic(topic))
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if err := again.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := again.EndTransaction(ctx, kgo.TryAbort); err != nil {
				t.Fatalf("abort with a new producer: %v", err)
			}
		}
		hw := listOffset(t, adm, topic, 0, readUncommitted)
		if lso := listOffset(t, adm, topic, 0, readCommitted); lso != hw {
			t.Fatalf("LSO %d, high watermark %d: transaction still open", lso, hw)
		}
		writeSentinels(t, b.Addr(), topic, 1)
		got := readToSentinel(t, b.Addr(), topic, 1, kgo.ReadCommitted())[0]
		want := 0
		if committed {
			want = 5
		}
		if len(got) != want {
			t.Fatalf("read_committed sees %d records, want %d (committed=%v)", len(got), want, committed)
		}
	})

	t.Run("coordinator-times-out", func(t *testing.T) {
		cfg := eosValues(t, map[string]string{
			"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100",
		})
		b := startBrokerWith(t, cfg)
		const topic = "eos-restart-b"
		createTopic(t, b, topic, 1)
		ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
		defer cancel()
		prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("eos-restart-b"),
			kgo.DefaultProduceTopic(topic), kgo.TransactionTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint("b-", i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		prod.Close() // gone without ending the transaction
		b = restartSamePort(t, b, cfg)
		adm := newFranz(t, b.Addr())

		// The coordinator aborts on timeout: poll until the LSO reaches
		// the high watermark (which the abort marker itself moves).
		deadline := time.Now().Add(e2eTimeout)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			hw, herr := tryListOffset(adm, topic, 0, readUncommitted)
			lso, lerr := tryListOffset(adm, topic, 0, readCommitted)
			if herr == nil && lerr == nil && lso == hw && hw > 5 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("LSO %d (%v), high watermark %d (%v): timed-out transaction never aborted", lso, lerr, hw, herr)
			}
			<-tick.C
		}
		writeSentinels(t, b.Addr(), topic, 1)
		if got := readToSentinel(t, b.Addr(), topic, 1, kgo.ReadCommitted())[0]; len(got) != 0 {
			t.Fatalf("read_committed sees %d records of an aborted transaction", len(got))
		}
	})
}
