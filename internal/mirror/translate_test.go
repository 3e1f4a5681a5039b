package mirror

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// produceOrders writes n records to topic, spread by key, each with a
// header and a timestamp of its own, and returns them.
func produceOrders(t *testing.T, addr, topic string, from, n int) []*kgo.Record {
	t.Helper()
	cl := client(t, addr, kgo.DefaultProduceTopic(topic))
	var recs []*kgo.Record
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{
			Key:       []byte(fmt.Sprintf("k%d", i%17)),
			Value:     []byte(fmt.Sprintf("order-%d", i)),
			Headers:   []kgo.RecordHeader{{Key: "seq", Value: []byte(fmt.Sprint(i))}},
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// sameRecords checks the target holds the source's records in the same
// partitions, in the same order, with the same keys, values, headers and
// timestamps.
func sameRecords(src, dst []*kgo.Record) error {
	if len(src) != len(dst) {
		return fmt.Errorf("%d records on the target, %d on the source", len(dst), len(src))
	}
	for i := range src {
		s, d := src[i], dst[i]
		if s.Partition != d.Partition || !bytes.Equal(s.Key, d.Key) || !bytes.Equal(s.Value, d.Value) ||
			!s.Timestamp.Equal(d.Timestamp) || fmt.Sprint(s.Headers) != fmt.Sprint(d.Headers) {
			return fmt.Errorf("record %d: source %d/%d %q=%q %v %v, target %d/%d %q=%q %v %v", i,
				s.Partition, s.Offset, s.Key, s.Value, s.Timestamp, s.Headers,
				d.Partition, d.Offset, d.Key, d.Value, d.Timestamp, d.Headers)
		}
	}
	return nil
}

// TestTranslateMirrorsTopicsGroupsAndInternals runs an A->B flow in
// MirrorMaker 2's mode between two Samsa brokers: the remote topic
// A.orders with the same partitions and records, its retention config,
// a topic created later picked up, offset syncs on A, checkpoints and
// heartbeats on B in MirrorMaker 2's formats, and a consumer group's offset
// translated to B, never ahead of where it was on A.
func TestTranslateMirrorsTopicsGroupsAndInternals(t *testing.T) {
	t.Parallel()
	a, _ := devcluster.StartTestBroker(t)
	b, _ := devcluster.StartTestBroker(t)
	c := clusters{"A": a, "B": b}
	createTopic(t, a, "orders", 3, map[string]*string{"retention.ms": ptr("86400000")})
	src := produceOrders(t, a, "orders", 0, 300)
	_ = src

	// A group that read part of the topic on A.
	ctx := context.Background()
	g := client(t, a, kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("billing"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	read := 0
	for read < 120 {
		fs := g.PollRecords(ctx, 120-read)
		read += fs.NumRecords()
	}
	if err := g.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	committed := map[int32]int64{}
	offs, err := kadm.NewClient(client(t, a)).FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	offs.Each(func(o kadm.OffsetResponse) { committed[o.Partition] = o.At })
	g.Close()

	m := runMirror(t, mm2Config(t, c, "tasks.max = 2"), c)

	srcRecs := readAll(t, a, "orders")
	eventually(t, 30*time.Second, "A.orders on B", func() error {
		ends := endOffsets(t, b, "A.orders")
		n := int64(0)
		for _, e := range ends {
			n += e
		}
		if n < int64(len(srcRecs)) {
			return fmt.Errorf("%d of %d records", n, len(srcRecs))
		}
		return nil
	})
	if err := sameRecords(srcRecs, readAll(t, b, "A.orders")); err != nil {
		t.Fatal(err)
	}

	// The config came along.
	rcs, err := kadm.NewClient(client(t, b)).DescribeTopicConfigs(ctx, "A.orders")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On("A.orders", nil)
	if v := configValue(rc, "retention.ms"); v != "86400000" {
		t.Errorf("A.orders retention.ms = %q, want 86400000", v)
	}

	// A new topic on A is picked up.
	createTopic(t, a, "late", 1, nil)
	produceOrders(t, a, "late", 0, 10)
	eventually(t, 30*time.Second, "A.late on B", func() error {
		if e := endOffsets(t, b, "A.late")[0]; e != 10 {
			return fmt.Errorf("end offset %d", e)
		}
		return nil
	})

	// Internal topics, in MirrorMaker 2's formats.
	var syncs []mm2.OffsetSync
	for _, r := range readAll(t, a, "mm2-offset-syncs.B.internal") {
		s, err := mm2.DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			t.Fatalf("offset sync %x=%x: %v", r.Key, r.Value, err)
		}
		syncs = append(syncs, s)
	}
	if len(syncs) == 0 {
		t.Fatal("no offset sync on A")
	}
	for _, s := range syncs {
		if s.Topic != "orders" && s.Topic != "late" {
			t.Errorf("offset sync for topic %q", s.Topic)
		}
		if s.UpstreamOffset != s.DownstreamOffset {
			// A fresh target topic mirrors a gapless source one to one.
			t.Errorf("offset sync %+v: a fresh copy has equal offsets", s)
		}
	}
	eventually(t, 30*time.Second, "checkpoints and synced offsets", func() error {
		var cps []mm2.Checkpoint
		for _, r := range readAll(t, b, "A.checkpoints.internal") {
			cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
			if err != nil {
				return fmt.Errorf("checkpoint %x=%x: %v", r.Key, r.Value, err)
			}
			cps = append(cps, cp)
		}
		latest := map[int32]mm2.Checkpoint{}
		for _, cp := range cps {
			if cp.Group == "billing" && cp.Topic == "A.orders" {
				latest[cp.Partition] = cp
			}
		}
		for p, up := range committed {
			cp, ok := latest[p]
			if !ok {
				return fmt.Errorf("no checkpoint of billing for A.orders[%d] (have %+v)", p, cps)
			}
			if cp.UpstreamOffset != up {
				return fmt.Errorf("checkpoint %+v: upstream %d", cp, up)
			}
			// Never ahead of the source commit; how far behind depends on
			// which syncs went out (at most 10 in flight, as Kafka's).
			if cp.DownstreamOffset > up || cp.DownstreamOffset < 1 {
				var ss []mm2.OffsetSync
				for _, r := range readAll(t, a, "mm2-offset-syncs.B.internal") {
					s, _ := mm2.DecodeOffsetSync(r.Key, r.Value)
					ss = append(ss, s)
				}
				return fmt.Errorf("checkpoint %+v: downstream must be in [1, %d] (syncs %+v)", cp, up, ss)
			}
		}
		got, err := kadm.NewClient(client(t, b)).FetchOffsets(ctx, "billing")
		if err != nil {
			return err
		}
		for p, cp := range latest {
			o, ok := got.Lookup("A.orders", p)
			if !ok || o.At != cp.DownstreamOffset {
				return fmt.Errorf("billing on B at A.orders[%d] = %+v, want %d", p, o, cp.DownstreamOffset)
			}
		}
		return nil
	})
	hb := readAll(t, b, "heartbeats")
	if len(hb) == 0 {
		t.Fatal("no heartbeat on B")
	}
	h, err := mm2.DecodeHeartbeat(hb[0].Key, hb[0].Value)
	if err != nil || h.SourceCluster != "A" || h.TargetCluster != "B" {
		t.Fatalf("heartbeat %+v, %v", h, err)
	}
	for _, l := range m.Lag() {
		if l.SourceTopic == "orders" && l.Lag != 0 {
			t.Errorf("lag %+v, want 0", l)
		}
	}
	cs := m.Counters()
	if len(cs) != 1 || cs[0].Records < 310 || cs[0].Checkpoints == 0 || cs[0].Heartbeats == 0 || cs[0].TopicsCreated < 2 {
		t.Errorf("counters %+v", cs)
	}
}

func configValue(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

// TestActiveActive runs A->B and B->A in one process: each cluster gets
// the other's topics under the source's prefix, and nothing comes back
// (A.orders on B is not mirrored to A as B.A.orders: a cycle). The
// heartbeats of each flow reach the other cluster as <source>.heartbeats.
func TestActiveActive(t *testing.T) {
	t.Parallel()
	a, _ := devcluster.StartTestBroker(t)
	b, _ := devcluster.StartTestBroker(t)
	c := clusters{"A": a, "B": b}
	createTopic(t, a, "orders", 1, nil)
	createTopic(t, b, "users", 1, nil)
	produceOrders(t, a, "orders", 0, 20)
	produceOrders(t, b, "users", 0, 30)
	cfg := mm2Config(t, c, "B->A.enabled = true")
	m, err := New(Options{Config: cfg, Clients: c.clientFunc(), RetryBackoff: 500 * time.Millisecond, ProgressInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, 30*time.Second, "both ways", func() error {
		if e := endOffsets(t, b, "A.orders")[0]; e != 20 {
			return fmt.Errorf("A.orders on B at %d", e)
		}
		if e := endOffsets(t, a, "B.users")[0]; e != 30 {
			return fmt.Errorf("B.users on A at %d", e)
		}
		hb := func(addr, topic string) int64 { return endOffsets(t, addr, topic)[0] }
		if hb(b, "A.heartbeats") == 0 || hb(a, "B.heartbeats") == 0 {
			return fmt.Errorf("heartbeats not mirrored yet")
		}
		return nil
	})
	time.Sleep(2 * time.Second) // several topic refreshes
	for _, addr := range []string{a, b} {
		listed, err := kadm.NewClient(client(t, addr)).ListTopics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range listed.Names() {
			if strings.HasPrefix(name, "A.B.") || strings.HasPrefix(name, "B.A.") {
				t.Errorf("%s exists: a topic went back where it came from", name)
			}
		}
	}
}
