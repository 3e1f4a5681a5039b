package broker

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/quota"
	"github.com/samsa-io/samsa/internal/record"
)

// setQuotas sets client quotas through AlterClientQuotas, as an operator
// does; the broker answers once its image has them.
func setQuotas(t *testing.T, b *Broker, quotas map[quota.Entity]map[string]float64) {
	t.Helper()
	name := func(p quota.Part) *string {
		if p.Default {
			return nil
		}
		return &p.Name
	}
	var entries []kadm.AlterClientQuotaEntry
	for e, values := range quotas {
		var entity kadm.ClientQuotaEntity
		if e.User.Set {
			entity = append(entity, kadm.ClientQuotaEntityComponent{Type: "user", Name: name(e.User)})
		}
		if e.ClientID.Set {
			entity = append(entity, kadm.ClientQuotaEntityComponent{Type: "client-id", Name: name(e.ClientID)})
		}
		entry := kadm.AlterClientQuotaEntry{Entity: entity}
		for k, v := range values {
			entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Value: v})
		}
		entries = append(entries, entry)
	}
	res, err := kadm.NewClient(newFranz(t, b.Addr())).AlterClientQuotas(t.Context(), entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("set %v: %v %s", r.Entity, r.Err, r.ErrMessage)
		}
	}
}

// quotaRate is what the capped clients of the quota tests may use:
// 1 MiB/s.
const quotaRate = 1 << 20

// throttleCounter counts the throttled responses a franz-go client saw.
type throttleCounter struct{ n, total atomic.Int64 }

func (h *throttleCounter) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
		h.total.Add(int64(d))
	}
}

// A producer and a consumer capped at 1 MiB/s each stay within 10% of it
// over 30 s (after a warm-up of 10), measured from what they had acknowledged and received, while
// a producer without a quota on the same broker runs unthrottled and
// faster. franz-go waits out throttle_time_ms itself (KIP-219).
func TestQuotasHoldProduceAndFetchRates(t *testing.T) {
	if os.Getenv("SAMSA_QUOTA_RATES") == "" {
		t.Skip("a rate is a timing: make quota-rates runs it (SAMSA_QUOTA_RATES)")
	}
	b := startBroker(t)
	addr := b.Addr()
	// No compression, so what the broker counts (request and batch sizes)
	// is what the clients count (record values) plus headers.
	none := kgo.ProducerBatchCompression(kgo.NoCompression())
	admin := newFranz(t, addr, none)
	createTopic(t, b, "quota-produce", 3)
	createTopic(t, b, "quota-fetch", 3)
	createTopic(t, b, "quota-free", 3)
	value := make([]byte, 16<<10)
	rand.Read(value)

	// The backlog the capped consumer reads: more than 40 s of its quota.
	backlog := 60 << 20
	var wg sync.WaitGroup
	for sent := 0; sent < backlog; sent += len(value) {
		wg.Add(1)
		admin.Produce(context.Background(), &kgo.Record{Topic: "quota-fetch", Value: value}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("backlog: %v", err)
			}
		})
	}
	wg.Wait()

	setQuotas(t, b, map[quota.Entity]map[string]float64{
		{ClientID: quota.Named("capped-producer")}: {quota.Produce.Key(): quotaRate},
		{ClientID: quota.Named("capped-consumer")}: {quota.Fetch.Key(): quotaRate},
	})

	// The rates are measured over 30 s after a warm-up of 10 s: a
	// client's first requests may use the quota of the windows no one has
	// used yet (as in Kafka), which are spent after the warm-up.
	const warmUp, run = 10 * time.Second, 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), warmUp+run)
	defer cancel()
	var measuring atomic.Bool
	var producedCapped, producedFree, consumed atomic.Int64
	var freeThrottles throttleCounter
	produce := func(cl *kgo.Client, topic string, n *atomic.Int64) {
		defer wg.Done()
		for ctx.Err() == nil {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
				if err == nil && measuring.Load() {
					n.Add(int64(len(r.Value)))
				}
			})
		}
	}
	capped := newFranz(t, addr, none, kgo.ClientID("capped-producer"), kgo.MaxBufferedRecords(64))
	free := newFranz(t, addr, none, kgo.ClientID("free"), kgo.MaxBufferedRecords(64), kgo.WithHooks(&freeThrottles))
	var consumerThrottles throttleCounter
	consumer := newFranz(t, addr, kgo.ClientID("capped-consumer"), kgo.WithHooks(&consumerThrottles), kgo.ConsumeTopics("quota-fetch"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	wg.Add(3)
	go produce(capped, "quota-produce", &producedCapped)
	go produce(free, "quota-free", &producedFree)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				if measuring.Load() {
					consumed.Add(int64(len(r.Value)))
				}
			})
		}
	}()
	time.Sleep(warmUp)
	measuring.Store(true)
	start := time.Now()
	freeThrottles.n.Store(0)
	consumerThrottles.n.Store(0)
	consumerThrottles.total.Store(0)
	<-ctx.Done()
	measuring.Store(false)
	elapsed := time.Since(start).Seconds()
	wg.Wait()

	within := func(what string, n int64) {
		rate := float64(n) / elapsed
		t.Logf("%s: %.0f KiB/s (%.2f× the quota)", what, rate/1024, rate/quotaRate)
		if rate < 0.9*quotaRate || rate > 1.1*quotaRate {
			t.Errorf("%s ran at %.0f B/s, want %d ±10%%", what, rate, quotaRate)
		}
	}
	within("the capped producer", producedCapped.Load())
	within("the capped consumer", consumed.Load())
	t.Logf("the consumer was throttled %d times, %v in all", consumerThrottles.n.Load(), time.Duration(consumerThrottles.total.Load()))
	freeRate := float64(producedFree.Load()) / elapsed
	t.Logf("the producer without a quota: %.0f KiB/s, %d throttled responses", freeRate/1024, freeThrottles.n.Load())
	if freeThrottles.n.Load() != 0 || freeRate < 2*quotaRate {
		t.Errorf("the producer without a quota: %.0f B/s and %d throttled responses, want unthrottled and well over the others' quota",
			freeRate, freeThrottles.n.Load())
	}
}

// throttleConn sends requests as client ID "raw" and reads the responses,
// waiting out no throttle time: what a client that ignores
// throttle_time_ms does.
type throttleConn struct {
	t    *testing.T
	nc   net.Conn
	r    *bufio.Reader
	corr int32
	// clientID is the requests' client ID.
	clientID string
}

func dialThrottled(t *testing.T, addr string) *throttleConn {
	return dialAs(t, addr, "raw")
}

func dialAs(t *testing.T, addr, clientID string) *throttleConn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &throttleConn{t: t, nc: nc, r: bufio.NewReader(nc), clientID: clientID}
}

func (c *throttleConn) send(req kmsg.Request) {
	c.corr++
	buf := appendRequestHeaderAndBody([]byte{0, 0, 0, 0}, req, c.corr, c.clientID)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if _, err := c.nc.Write(buf); err != nil {
		c.t.Fatal(err)
	}
}

func (c *throttleConn) receive(req kmsg.Request) kmsg.Response {
	c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c.r, size[:]); err != nil {
		c.t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.r, body); err != nil {
		c.t.Fatal(err)
	}
	resp, err := decodeResponseHeaderAndBody(body, req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// produceRequest is an acks=1 produce of one record of n bytes.
func produceRequest(t *testing.T, version int16, topic string, n int) *kmsg.ProduceRequest {
	batch := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Records: []record.Record{{Timestamp: time.Now().UnixMilli(), Value: make([]byte, n)}}}
	raw, err := batch.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// A client that ignores throttle_time_ms is held to it all the same: the
// broker answers a throttled request at once, with the throttle time, and
// reads nothing more from the connection until it has passed (KIP-219).
// A client of a version from before KIP-219 (Produce v5) gets its answer
// only once the throttle time has passed.
func TestThrottledConnectionsAreMuted(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "muted", 1)
	setQuotas(t, b, map[quota.Entity]map[string]float64{{User: quota.Named("ANONYMOUS")}: {quota.Produce.Key(): 100_000}})

	c := dialThrottled(t, b.Addr())
	// 150 KB, then 150 KB more in the same window: over the two windows'
	// worth (200 KB) a producer may use in one.
	for i, want := range []bool{false, true} {
		req := produceRequest(t, 9, "muted", 150_000)
		c.send(req)
		resp := c.receive(req).(*kmsg.ProduceResponse)
		if throttled := resp.ThrottleMillis > 0; throttled != want {
			t.Fatalf("request %d: throttle %d ms, want throttled %v", i+1, resp.ThrottleMillis, want)
		}
		if want {
			throttle := time.Duration(resp.ThrottleMillis) * time.Millisecond
			next := produceRequest(t, 9, "muted", 10)
			start := time.Now()
			c.send(next)
			c.receive(next)
			if waited := time.Since(start); waited < throttle*9/10 {
				t.Errorf("the request after a throttle of %v was answered in %v: the connection was not muted", throttle, waited)
			}
		}
	}

	// Produce v5: the response itself waits out the throttle time. In a
	// window of its own, 250 KB is over the two windows' worth.
	old := dialThrottled(t, b.Addr())
	req := produceRequest(t, 5, "muted", 250_000)
	start := time.Now()
	old.send(req)
	resp := old.receive(req).(*kmsg.ProduceResponse)
	if resp.ThrottleMillis <= 0 {
		t.Fatalf("a produce v5 over the quota: throttle %d ms", resp.ThrottleMillis)
	}
	if waited, throttle := time.Since(start), time.Duration(resp.ThrottleMillis)*time.Millisecond; waited < throttle*9/10 {
		t.Errorf("produce v5 throttled %v was answered in %v: the response was not held back", throttle, waited)
	}
}

// createTopicsRequest asks for topics of the given partition counts.
func createTopicsRequest(version int16, partitions map[string]int32, order ...string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = version, 10_000
	for _, name := range order {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions[name], 1
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// The controller mutation quota (KIP-599): at one partition a second, a
// client's bucket holds 11; CreateTopics v7 may take it into debt with a
// topic, and the topics after are refused with THROTTLING_QUOTA_EXCEEDED
// and a throttle time until the debt is paid. Before v6, which knows no
// such error, CreateTopics creates everything and is throttled instead.
// Validate-only requests mutate nothing and are not counted.
func TestControllerMutationQuota(t *testing.T) {
	b := startBroker(t)
	setQuotas(t, b, map[quota.Entity]map[string]float64{{ClientID: quota.DefaultPart}: {quota.ControllerMutation.Key(): 1}})
	c := dialThrottled(t, b.Addr())
	codes := func(resp *kmsg.CreateTopicsResponse) map[string]int16 {
		out := map[string]int16{}
		for _, st := range resp.Topics {
			out[st.Topic] = st.ErrorCode
		}
		return out
	}

	validate := createTopicsRequest(7, map[string]int32{"v": 1000}, "v")
	validate.ValidateOnly = true
	c.send(validate)
	if resp := c.receive(validate).(*kmsg.CreateTopicsResponse); resp.ThrottleMillis != 0 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("validate-only 1000 partitions: throttle %d, %s", resp.ThrottleMillis, codeName(resp.Topics[0].ErrorCode))
	}

	req := createTopicsRequest(7, map[string]int32{"m1": 11, "m2": 10, "m3": 1, "m4": 1}, "m1", "m2", "m3", "m4")
	c.send(req)
	resp := c.receive(req).(*kmsg.CreateTopicsResponse)
	got := codes(resp)
	if got["m1"] != 0 || got["m2"] != 0 || got["m3"] != kerr.ThrottlingQuotaExceeded.Code || got["m4"] != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("11, 10, 1 and 1 partitions against a bucket of 11: %v, want the last two THROTTLING_QUOTA_EXCEEDED", got)
	}
	// A debt of 10 partitions at one a second: ten seconds, less what
	// creating them took.
	if resp.ThrottleMillis < 5000 || resp.ThrottleMillis > 10_000 {
		t.Errorf("throttle %d ms, want nearly 10 s", resp.ThrottleMillis)
	}
	if _, ok := b.topics.byTopicName("m3"); ok {
		t.Error("a refused topic was created")
	}

	// Another client, with a bucket of its own (the default client-id
	// quota's sensor is per client ID), goes two partitions into debt.
	old := dialAs(t, b.Addr(), "old")
	v2 := createTopicsRequest(2, map[string]int32{"o1": 13}, "o1")
	start := time.Now()
	old.send(v2)
	resp = old.receive(v2).(*kmsg.CreateTopicsResponse)
	if resp.Topics[0].ErrorCode != 0 || resp.ThrottleMillis <= 0 || resp.ThrottleMillis > 2000 {
		t.Fatalf("v2 two partitions into debt: %s, throttle %d ms, want created and throttled up to 2 s", codeName(resp.Topics[0].ErrorCode), resp.ThrottleMillis)
	}
	// Before v3 the client does not wait out throttle_time_ms itself: the
	// broker holds the response back.
	if waited := time.Since(start); waited < time.Duration(resp.ThrottleMillis)*time.Millisecond*9/10 {
		t.Errorf("v2 throttled %d ms answered in %v, want held back", resp.ThrottleMillis, waited)
	}
}

// CreatePartitions v3 counts the partitions it adds against the same
// bucket, and is refused once it is in debt.
func TestControllerMutationQuotaOnCreatePartitions(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "grow", 1)
	setQuotas(t, b, map[quota.Entity]map[string]float64{{ClientID: quota.Named("raw")}: {quota.ControllerMutation.Key(): 1}})
	c := dialThrottled(t, b.Addr())
	grow := func(to int32) (int16, int32) {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.Version, req.TimeoutMillis = 3, 10_000
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "grow", to
		req.Topics = append(req.Topics, rt)
		c.send(req)
		resp := c.receive(req).(*kmsg.CreatePartitionsResponse)
		return resp.Topics[0].ErrorCode, resp.ThrottleMillis
	}
	if code, _ := grow(21); code != 0 { // 20 added: a debt of 9
		t.Fatalf("adding 20 partitions to a bucket of 11: %s", codeName(code))
	}
	if code, throttle := grow(22); code != kerr.ThrottlingQuotaExceeded.Code || throttle < 4000 || throttle > 9000 {
		t.Errorf("adding one more in debt: %s, throttle %d ms, want THROTTLING_QUOTA_EXCEEDED until the debt of 9 s is paid",
			codeName(code), throttle)
	}
	if ts, _ := b.topics.byTopicName("grow"); len(ts.partitions) != 21 {
		t.Errorf("%d partitions, want 21", len(ts.partitions))
	}
}

// request_percentage counts the time the broker spends on a client's
// requests: at 0.00001% of a thread (a microsecond in a window of 10 s), a few Metadata
// requests are over it,
// and the throttle time is at most one window, as Kafka bounds it.
func TestRequestPercentageQuota(t *testing.T) {
	b := startBroker(t)
	setQuotas(t, b, map[quota.Entity]map[string]float64{{ClientID: quota.Named("raw")}: {quota.Request.Key(): 0.00001}})
	c := dialThrottled(t, b.Addr())
	for i := range 20 {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		c.send(req)
		resp := c.receive(req).(*kmsg.MetadataResponse)
		if resp.ThrottleMillis > 0 {
			if resp.ThrottleMillis > 1000 {
				t.Errorf("throttle %d ms, want at most the one-second window", resp.ThrottleMillis)
			}
			return
		}
		if i == 19 {
			t.Fatal("20 Metadata requests against 0.00001% of a thread were never throttled")
		}
	}
}

// apiVersionsOver opens a connection to addr and reports whether the
// broker answered an ApiVersions request on it within a while.
func apiVersionsOver(t *testing.T, addr string) bool {
	c := dialAs(t, addr, "conn")
	req := kmsg.NewPtrApiVersionsRequest()
	c.send(req)
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var size [4]byte
	_, err := io.ReadFull(c.r, size[:])
	c.nc.Close()
	return err == nil
}

// max.connection.creation.rate (KIP-612): at two connections a second,
// the windows take twenty at once, and the acceptor then makes each next
// one wait; without the limit they are all served at once.
func TestConnectionCreationRate(t *testing.T) {
	open := func(b *Broker, n int) time.Duration {
		start := time.Now()
		for i := range n {
			if !apiVersionsOver(t, b.Addr()) {
				t.Fatalf("connection %d was not served", i+1)
			}
		}
		return time.Since(start)
	}
	limited := startBrokerValues(t, map[string]string{"max.connection.creation.rate": "2"})
	if took := open(limited, 24); took < time.Second {
		t.Errorf("24 connections at 2 a second took %v, want the last ones held back a second and more", took)
	}
	free := startBroker(t)
	if took := open(free, 24); took > time.Second {
		t.Errorf("24 connections without a limit took %v", took)
	}
}

// An IP's connection_creation_rate: past it a connection is held,
// unread, and then closed.
func TestIPConnectionCreationRate(t *testing.T) {
	b := startBroker(t)
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	ip := "127.0.0.1"
	if res, err := adm.AlterClientQuotas(t.Context(), []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: &ip}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}},
	}}); err != nil || res[0].Err != nil {
		t.Fatalf("set the IP's quota: %v %v", err, res)
	}
	for i := range 10 {
		if !apiVersionsOver(t, b.Addr()) {
			t.Fatalf("connection %d of the 10 a rate of 1/s takes over 10 s was not served", i+1)
		}
	}
	start := time.Now()
	if apiVersionsOver(t, b.Addr()) {
		t.Fatal("the 11th connection was served")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the refused connection was closed after %v, want within the one-second throttle", took)
	}
}

// The same quotas hold for librdkafka, which waits out throttle_time_ms
// its own way (confluent-kafka-go, test/compat/go/quotaprobe): with
// SAMSA_QUOTA_LIBRDKAFKA naming the probe's binary (make quota-rates
// sets it), a producer and a consumer capped at 1 MiB/s each stay
// within 10% of it over 30 s after a warm-up of 10.
func TestQuotasHoldWithLibrdkafka(t *testing.T) {
	probe := os.Getenv("SAMSA_QUOTA_LIBRDKAFKA")
	if probe == "" {
		t.Skip("a rate is a timing: make quota-rates runs it (SAMSA_QUOTA_LIBRDKAFKA names the probe)")
	}
	b := startBroker(t)
	createTopic(t, b, "rd-produce", 3)
	createTopic(t, b, "rd-fetch", 3)
	backfill := newFranz(t, b.Addr(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := make([]byte, 16<<10)
	rand.Read(value)
	var wg sync.WaitGroup
	for sent := 0; sent < 60<<20; sent += len(value) {
		wg.Add(1)
		backfill.Produce(context.Background(), &kgo.Record{Topic: "rd-fetch", Value: value}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("backlog: %v", err)
			}
		})
	}
	wg.Wait()
	setQuotas(t, b, map[quota.Entity]map[string]float64{
		{ClientID: quota.Named("rd-producer")}: {quota.Produce.Key(): quotaRate},
		{ClientID: quota.Named("rd-consumer")}: {quota.Fetch.Key(): quotaRate},
	})
	run := func(mode, topic, clientID string, out *string) {
		defer wg.Done()
		cmd := exec.Command(probe, mode, b.Addr(), topic, clientID, "10s", "30s")
		cmd.Stderr = os.Stderr
		got, err := cmd.Output()
		if err != nil {
			t.Errorf("quotaprobe %s: %v: %s", mode, err, got)
		}
		*out = string(got)
	}
	var produced, consumed string
	wg.Add(2)
	go run("produce", "rd-produce", "rd-producer", &produced)
	go run("consume", "rd-fetch", "rd-consumer", &consumed)
	wg.Wait()
	for what, out := range map[string]string{"the capped librdkafka producer": produced, "the capped librdkafka consumer": consumed} {
		var n int64
		var seconds float64
		if _, err := fmt.Sscanf(out, "bytes %d seconds %f", &n, &seconds); err != nil {
			t.Errorf("%s: %q: %v", what, out, err)
			continue
		}
		rate := float64(n) / seconds
		t.Logf("%s: %.0f KiB/s (%.2f× the quota)", what, rate/1024, rate/quotaRate)
		if rate < 0.9*quotaRate || rate > 1.1*quotaRate {
			t.Errorf("%s ran at %.0f B/s, want %d ±10%%", what, rate, quotaRate)
		}
	}
}

// DeleteTopics v5+ counts the partitions it deletes against the same
// bucket, and refuses the topics after the one that took it into debt.
func TestControllerMutationQuotaOnDeleteTopics(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "d1", 11)
	createTopic(t, b, "d2", 10)
	createTopic(t, b, "d3", 1)
	setQuotas(t, b, map[quota.Entity]map[string]float64{{ClientID: quota.Named("raw")}: {quota.ControllerMutation.Key(): 1}})
	c := dialThrottled(t, b.Addr())
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version, req.TimeoutMillis, req.TopicNames = 5, 10_000, []string{"d1", "d2", "d3"}
	c.send(req)
	resp := c.receive(req).(*kmsg.DeleteTopicsResponse)
	got := map[string]int16{}
	for _, st := range resp.Topics {
		got[deref(st.Topic)] = st.ErrorCode
	}
	if len(resp.Topics) != 3 || got["d1"] != 0 || got["d2"] != 0 || got["d3"] != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("deleting 11, 10 and 1 partitions against a bucket of 11: %v, want the last THROTTLING_QUOTA_EXCEEDED", got)
	}
	if resp.ThrottleMillis <= 0 {
		t.Errorf("throttle %d ms, want the debt's", resp.ThrottleMillis)
	}
	if _, ok := b.topics.byTopicName("d3"); !ok {
		t.Error("the refused topic was deleted")
	}
}

// Quotas live in the metadata log: a restarted broker enforces them again
// from its image, with no one setting them anew.
func TestQuotasSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir})
	setQuotas(t, b, map[quota.Entity]map[string]float64{{ClientID: quota.Named("raw")}: {quota.Request.Key(): 0.00001}})
	b.Close()
	b = startBrokerWith(t, Config{LogDir: dir})
	c := dialThrottled(t, b.Addr())
	for range 20 {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		c.send(req)
		if c.receive(req).(*kmsg.MetadataResponse).ThrottleMillis > 0 {
			return
		}
	}
	t.Fatal("after a restart, 20 Metadata requests against 0.00001% of a thread were never throttled")
}
