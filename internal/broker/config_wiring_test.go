package broker

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests that a broker config which used to be accepted and ignored now has
// its effect. Each names the config it covers.

func TestBrokerRack(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"broker.rack": "rack-a"})
	adm, ctx := adminClient(t, b)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Rack == nil || *md.Brokers[0].Rack != "rack-a" {
		t.Fatalf("brokers = %+v, want rack-a", md.Brokers)
	}
}

// apiVersions answers on a served connection.
func apiVersions(r *rawConn, corr int32) {
	r.t.Helper()
	r.roundTrip(kmsg.NewPtrApiVersionsRequest(), corr)
}

// notServed checks that a request sent on r gets no answer while the broker
// holds the connection in its backlog, then returns once it is answered.
func notServedUntil(t *testing.T, r *rawConn, corr int32, free func()) {
	t.Helper()
	r.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), corr))
	r.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, _, err := r.readFrame(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection past the limit was served (err %v)", err)
	}
	free()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, _, err := r.readFrame(); err != nil || got != corr {
		t.Fatalf("after a slot freed: correlation %d, %v", got, err)
	}
}

func TestMaxConnections(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"max.connections": "2"})
	c1, c2 := dialRaw(t, b), dialRaw(t, b)
	apiVersions(c1, 1)
	apiVersions(c2, 1)
	c3 := dialRaw(t, b) // the TCP handshake completes: the connection waits in the backlog
	notServedUntil(t, c3, 1, func() { c1.nc.Close() })
}

func TestMaxConnectionsPerListener(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{
		"listeners":                       "A://127.0.0.1:0,B://127.0.0.1:0",
		"listener.security.protocol.map":  "A:PLAINTEXT,B:PLAINTEXT",
		"listener.name.a.max.connections": "1",
	})
	if err != nil {
		t.Fatal(err)
	}
	ls, _ := ParseListeners(v.String("listeners"))
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: v, Listeners: ls})
	dial := func(l Listener) *rawConn {
		nc, err := net.DialTimeout("tcp", net.JoinHostPort(l.Host, strconv.Itoa(l.Port)), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		return &rawConn{t: t, nc: nc}
	}
	a, bl := b.Listeners()[0], b.Listeners()[1]
	a1 := dial(a)
	apiVersions(a1, 1)
	for i := range 3 { // B has no limit of its own
		apiVersions(dial(bl), int32(i))
	}
	notServedUntil(t, dial(a), 1, func() { a1.nc.Close() })
}

// max.connections is cluster-wide dynamic: lowering it holds back new
// connections, raising it lets them in.
func TestMaxConnectionsDynamic(t *testing.T) {
	b := startBroker(t)
	c1 := dialRaw(t, b)
	alter := func(corr int32, value string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeBroker
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = "max.connections", kmsg.StringPtr(value)
		r.Configs = append(r.Configs, cfg)
		req.Resources = append(req.Resources, r)
		resp := c1.roundTrip(req, corr).(*kmsg.IncrementalAlterConfigsResponse)
		if code := resp.Resources[0].ErrorCode; code != 0 {
			t.Fatalf("alter max.connections=%s: error %d", value, code)
		}
	}
	alter(1, "1")
	notServedUntil(t, dialRaw(t, b), 1, func() { alter(2, "5") })
}

func TestMaxConnectionsPerIP(t *testing.T) {
	for _, tt := range []struct {
		name    string
		raw     map[string]string
		allowed int
	}{
		{"limit", map[string]string{"max.connections.per.ip": "1"}, 1},
		{"override by IP", map[string]string{"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "10.0.0.1:5, 127.0.0.1:2"}, 2},
		{"override by name", map[string]string{"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "localhost:3"}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := startBrokerValues(t, tt.raw)
			var open []*rawConn
			for i := range tt.allowed {
				c := dialRaw(t, b)
				apiVersions(c, int32(i))
				open = append(open, c)
			}
			// One more from the same IP is closed at once.
			over := dialRaw(t, b)
			over.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 9))
			over.expectClosed()
			// A slot freed by a close is taken again.
			open[0].nc.Close()
			deadline := time.Now().Add(10 * time.Second)
			for {
				c := dialRaw(t, b)
				c.sendFrame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 1))
				if _, _, err := c.readFrame(); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("a closed connection's slot was not freed")
				}
			}
		})
	}
}

// openSession sends a full fetch that asks for a session (epoch 0) and
// returns the session ID the broker gave.
func openSession(t *testing.T, r *rawConn, topic string) int32 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.SessionEpoch = 12, -1, 1<<20, 0
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := r.roundTrip(req, 1).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("full fetch: error %d", resp.ErrorCode)
	}
	return resp.SessionID
}

// incremental sends an empty incremental fetch on a session and returns the
// top-level error code.
func incremental(r *rawConn, id int32) int16 {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.SessionID, req.SessionEpoch = 12, -1, 1<<20, id, 1
	return r.roundTrip(req, 2).(*kmsg.FetchResponse).ErrorCode
}

func TestFetchSessionCacheSlots(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"max.incremental.fetch.session.cache.slots": "2"})
	createTopic(t, b, "s", 1)
	c := dialRaw(t, b)
	first, second := openSession(t, c, "s"), openSession(t, c, "s")
	if first == 0 || second == 0 {
		t.Fatalf("sessions %d %d, want IDs", first, second)
	}
	if code := incremental(c, first); code != 0 {
		t.Fatalf("two sessions in two slots: error %d", code)
	}
	// A third session evicts the least recently used, second.
	openSession(t, c, "s")
	if code := incremental(c, second); code != kerr.FetchSessionIDNotFound.Code {
		t.Errorf("evicted session: error %d, want FETCH_SESSION_ID_NOT_FOUND", code)
	}

	none := startBrokerValues(t, map[string]string{"max.incremental.fetch.session.cache.slots": "0"})
	createTopic(t, none, "s", 1)
	if id := openSession(t, dialRaw(t, none), "s"); id != 0 {
		t.Errorf("no slots: session %d, want a sessionless fetch (0)", id)
	}
}

// sockopt reads an int socket option of a connection.
func sockopt(t *testing.T, nc net.Conn, opt int) int {
	t.Helper()
	rc, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, opt) }); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}

// startWithAcceptHook starts a broker whose accepted connections are sent
// to the returned channel.
func startWithAcceptHook(t *testing.T, raw map[string]string) (*Broker, chan net.Conn) {
	t.Helper()
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{NodeID: 1, LogDir: t.TempDir(), Values: v, Logger: quiet,
		Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 4)
	b.acceptedHook = func(nc net.Conn) { accepted <- nc }
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, accepted
}

func TestSocketBufferSizes(t *testing.T) {
	// Linux reports twice the size asked for (the kernel's bookkeeping
	// share), so compare with the size a plain socket gets for the same ask.
	want := func(opt, size int) int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		rc, _ := nc.(*net.TCPConn).SyscallConn()
		var v int
		rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, size)
			v, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, opt)
		})
		return v
	}
	b, accepted := startWithAcceptHook(t, map[string]string{"socket.send.buffer.bytes": "65536", "socket.receive.buffer.bytes": "32768"})
	dialRaw(t, b)
	nc := <-accepted
	if got, w := sockopt(t, nc, syscall.SO_SNDBUF), want(syscall.SO_SNDBUF, 65536); got != w {
		t.Errorf("SO_SNDBUF = %d, want %d", got, w)
	}
	if got, w := sockopt(t, nc, syscall.SO_RCVBUF), want(syscall.SO_RCVBUF, 32768); got != w {
		t.Errorf("SO_RCVBUF = %d, want %d", got, w)
	}
}

// With the acceptor held at max.connections, connections pile up in the
// listen backlog; past socket.listen.backlog.size the kernel drops them.
func TestSocketListenBacklog(t *testing.T) {
	dialAll := func(b *Broker, n int) (ok int) {
		for range n {
			nc, err := net.DialTimeout("tcp", b.Addr(), 300*time.Millisecond)
			if err != nil {
				continue
			}
			t.Cleanup(func() { nc.Close() })
			ok++
		}
		return ok
	}
	small := startBrokerValues(t, map[string]string{"max.connections": "1", "socket.listen.backlog.size": "2"})
	// One connection served, one held by the waiting acceptor, then the
	// backlog: Linux queues one more than the backlog.
	if ok := dialAll(small, 8); ok > 5 {
		t.Errorf("backlog 2: %d of 8 connections completed, want at most 5", ok)
	}
	dflt := startBrokerValues(t, map[string]string{"max.connections": "1"})
	if ok := dialAll(dflt, 8); ok != 8 {
		t.Errorf("backlog 50: %d of 8 connections completed", ok)
	}
}

func TestFetchMaxBytes(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"fetch.max.bytes": "1024"})
	createTopic(t, b, "capped", 1)
	r := dialRaw(t, b)
	for i := range 4 {
		batch := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
			Records: []record.Record{{Timestamp: time.Now().UnixMilli(), Value: make([]byte, 600)}}}
		raw, err := batch.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		if sp := rawProducePart(r, rawProduceReq("capped", 0, -1, raw), int32(i+1)); sp.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
		}
	}
	// The client asks for 64 MiB; the broker returns what fits in 1024
	// bytes: the first batch alone.
	part := rawFetch(t, r, "capped", 0, 0, 10)
	whole, _ := wholeBatches(part.RecordBatches)
	if h, err := record.ParseHeader(whole); err != nil || len(part.RecordBatches) > 1024 || h.Size() != len(whole) {
		t.Errorf("fetch returned %d bytes, %d in whole batches; want one whole batch within fetch.max.bytes", len(part.RecordBatches), len(whole))
	}
}

func TestMaxRequestPartitionSizeLimit(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"max.request.partition.size.limit": "3"})
	createTopic(t, b, "wide", 5)
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 2000
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = "wide"
	req.Topics = append(req.Topics, rt)
	resp := dialRaw(t, b).roundTrip(req, 1).(*kmsg.DescribeTopicPartitionsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 3 || resp.NextCursor == nil || resp.NextCursor.Partition != 3 {
		t.Fatalf("response %+v, want 3 partitions and a cursor at partition 3", resp)
	}
}

// The coordinators replay their topics in reads of the load buffer size.
func TestCoordinatorLoadBufferSize(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"offsets.load.buffer.size": "1", "transaction.state.log.load.buffer.size": "4096"})
	cfg := b.brokerConfig(b.meta.Load())
	if got := b.coordinatorLog(cfg, group.OffsetsTopic).readSize; got != 1 {
		t.Errorf("__consumer_offsets read size %d, want offsets.load.buffer.size", got)
	}
	if got := b.coordinatorLog(cfg, txn.StateTopic).readSize; got != 4096 {
		t.Errorf("__transaction_state read size %d, want transaction.state.log.load.buffer.size", got)
	}
	// A read size below one batch still makes progress, a batch per read.
	createTopic(t, b, "replayed", 1)
	r := dialRaw(t, b)
	for i := range 5 {
		raw, _ := (&record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
			Records: []record.Record{{Timestamp: time.Now().UnixMilli(), Value: []byte("v")}}}).AppendTo(nil)
		rawProducePart(r, rawProduceReq("replayed", 0, -1, raw), int32(i+1))
	}
	for size, want := range map[int32]int{1: 5, 1 << 20: 1} {
		reads := 0
		l := internalLog{b: b, topic: "replayed", readSize: size}
		if err := l.ReadAll(context.Background(), 0, func([]byte) error { reads++; return nil }); err != nil {
			t.Fatal(err)
		}
		if reads != want {
			t.Errorf("read size %d: %d reads, want %d", size, reads, want)
		}
	}
}

// Offset commits are written with offsets.topic.compression.codec, and
// read back after a restart.
func TestOffsetsTopicCompressionCodec(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{
		"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1", "offsets.topic.compression.codec": "4"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{LogDir: t.TempDir(), Values: v}
	b := startBrokerWith(t, cfg)
	createTopic(t, b, "t", 1)
	adm, ctx := adminClient(t, b)
	var offs kadm.Offsets
	offs.AddOffset("t", 0, 42, -1)
	if resp, err := adm.CommitOffsets(ctx, "g", offs); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	_, batches := storedPartition(t, b, group.OffsetsTopic, 0)
	if len(batches) == 0 {
		t.Fatal("no commit stored")
	}
	for i, batch := range batches {
		if batch.Attributes&7 != 4 {
			t.Errorf("batch %d: codec %d, want zstd", i, batch.Attributes&7)
		}
	}
	b.Close()
	b = startBrokerWith(t, cfg)
	adm, ctx = adminClient(t, b)
	got, err := adm.FetchOffsets(ctx, "g")
	if o, ok := got.Lookup("t", 0); err != nil || !ok || o.At != 42 {
		t.Fatalf("after restart: %+v %v", o, err)
	}
}

func TestMetadataLogDir(t *testing.T) {
	meta := t.TempDir()
	v, err := config.Parse(config.Broker, map[string]string{"metadata.log.dir": meta})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{LogDir: t.TempDir(), Values: v}
	b := startBrokerWith(t, cfg)
	createTopic(t, b, "kept", 1)
	if _, err := os.Stat(filepath.Join(meta, metadataDir)); err != nil {
		t.Errorf("metadata log not in metadata.log.dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.LogDir, metadataDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("metadata log in log.dirs too: %v", err)
	}
	b.Close()
	b = startBrokerWith(t, cfg)
	if _, ok := b.topics.byTopicName("kept"); !ok {
		t.Error("topic lost across a restart: the metadata was not read back from metadata.log.dir")
	}
}

func TestManagerConfig(t *testing.T) {
	parse := func(raw map[string]string) config.Values {
		v, err := config.Parse(config.Broker, raw)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	dflt := managerConfig([]string{"d"}, parse(nil))
	if dflt.CleanerDisabled || dflt.CheckpointInterval != time.Minute || dflt.FlushCheckInterval != 0 {
		t.Errorf("defaults: %+v", dflt)
	}
	c := managerConfig([]string{"d"}, parse(map[string]string{
		"log.cleaner.threads":                           "0",
		"log.flush.offset.checkpoint.interval.ms":       "30000",
		"log.flush.start.offset.checkpoint.interval.ms": "5000",
		"log.flush.scheduler.interval.ms":               "250",
	}))
	if !c.CleanerPaused || c.CleanerDisabled {
		t.Error("log.cleaner.threads=0 did not pause the cleaner")
	}
	if c.CheckpointInterval != 5*time.Second {
		t.Errorf("checkpoint every %v, want the shorter interval, 5s", c.CheckpointInterval)
	}
	if c.FlushCheckInterval != 250*time.Millisecond {
		t.Errorf("flush check every %v, want 250ms", c.FlushCheckInterval)
	}
	if c := managerConfig([]string{"d"}, parse(map[string]string{"log.cleaner.threads": "4", "log.cleaner.dedupe.buffer.size": "4000000"})); c.CleanerMapMemory != 1000000 {
		t.Errorf("map memory %d, want a quarter", c.CleanerMapMemory)
	}
	if got := millis(1<<63 - 1); got != time.Duration(1<<63-1) {
		t.Errorf("Long.MAX_VALUE ms = %v, want the largest Duration", got)
	}
}

// TestCleanerSettingsAreDynamic: kafka-configs.sh --alter of
// log.cleaner.threads and log.cleaner.dedupe.buffer.size (per broker or
// cluster default) reaches the running log cleaner, as in Kafka.
func TestCleanerSettingsAreDynamic(t *testing.T) {
	b := startBroker(t)
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	// broker -1 is the cluster-wide default (no broker named).
	set := func(broker int32, name, value string) {
		t.Helper()
		var brokers []int32
		if broker >= 0 {
			brokers = []int32{broker}
		}
		rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: kmsg.StringPtr(value)}}, brokers...)
		if err == nil && len(rs) == 1 {
			err = rs[0].Err
		}
		if err != nil {
			t.Fatalf("%s=%s: %v", name, value, err)
		}
	}
	wait := func(what string, ok func(storage.CleanerSettings) bool) {
		t.Helper()
		for {
			applied := b.imageApplied.Wait()
			if s := b.logs.Cleaner(); ok(s) {
				return
			}
			select {
			case <-applied:
			case <-ctx.Done():
				t.Fatalf("the cleaner never got %s: %+v", what, b.logs.Cleaner())
			}
		}
	}
	set(1, "log.cleaner.threads", "0")
	wait("paused", func(s storage.CleanerSettings) bool { return s.Paused })
	set(-1, "log.cleaner.threads", "2") // the cluster default; the per-broker 0 still wins
	set(1, "log.cleaner.threads", "2")
	set(1, "log.cleaner.dedupe.buffer.size", "8000000")
	wait("two threads' memory", func(s storage.CleanerSettings) bool { return !s.Paused && s.MapMemory == 4000000 })
}

// TestQuorumNodesKeepKafkasInternalTopicDefaults: Samsa's single node
// replicates its coordinators' topics once (it has no other broker); a
// node of a quorum gets Kafka's 3 replicas and min ISR 2, unless the
// operator sets them.
func TestQuorumNodesKeepKafkasInternalTopicDefaults(t *testing.T) {
	want := func(v config.Values, rf, txnRF, minISR int32) {
		t.Helper()
		if got := [3]int32{v.Int("offsets.topic.replication.factor"), v.Int("transaction.state.log.replication.factor"),
			v.Int("transaction.state.log.min.isr")}; got != [3]int32{rf, txnRF, minISR} {
			t.Errorf("internal topic settings %v, want %v", got, [3]int32{rf, txnRF, minISR})
		}
	}
	single, err := LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	want(single, 1, 1, 1)
	quorum := map[string]string{"controller.quorum.voters": "1@127.0.0.1:9093", "controller.listener.names": "CONTROLLER",
		"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}
	v, err := LoadConfig("", quorum)
	if err != nil {
		t.Fatal(err)
	}
	want(v, 3, 3, 2)
	quorum["offsets.topic.replication.factor"] = "1"
	path := writeServerProperties(t, "transaction.state.log.min.isr=1\n")
	if v, err = LoadConfig(path, quorum); err != nil {
		t.Fatal(err)
	}
	want(v, 1, 3, 1)
}
