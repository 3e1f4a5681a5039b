package broker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/sharecoord"
)

// shareClient drives ShareFetch and ShareAcknowledge by hand for one
// member, keeping its share session's epoch.
type shareClient struct {
	t      *testing.T
	cl     *kgo.Client
	group  string
	member string
	topic  [16]byte
	epoch  int32
	// to is the broker spoken to: the client's seed when nil.
	to *kgo.Broker
}

func (s *shareClient) broker() *kgo.Broker {
	if s.to != nil {
		return s.to
	}
	return s.cl.SeedBrokers()[0]
}

type acquired struct {
	first, last int64
	count       int16
}

// fetch sends a ShareFetch on partition 0 with acks (first, last, type
// triples) and returns the acquired ranges, the records' offsets, and the
// partition's acknowledge error code.
func (s *shareClient) fetch(ctx context.Context, maxRecords int32, wait time.Duration, acks ...[3]int64) ([]acquired, []int64, int16) {
	s.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 1
	req.GroupID, req.MemberID = kmsg.StringPtr(s.group), kmsg.StringPtr(s.member)
	req.ShareSessionEpoch = s.epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = int32(wait/time.Millisecond), 1, 1<<20, maxRecords, maxRecords
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = s.topic
	rp := kmsg.NewShareFetchRequestTopicPartition()
	for _, a := range acks {
		ab := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = a[0], a[1], []int8{int8(a[2])}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	raw, err := s.broker().Request(ctx, req)
	if err != nil {
		s.t.Fatalf("ShareFetch: %v", err)
	}
	resp := raw.(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 {
		s.t.Fatalf("ShareFetch (epoch %d): %v %v", s.epoch, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	s.epoch = nextShareEpoch(s.epoch)
	var got []acquired
	var offsets []int64
	var ackCode int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				s.t.Fatalf("ShareFetch partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
			ackCode = p.AcknowledgeErrorCode
			for _, a := range p.AcquiredRecords {
				got = append(got, acquired{a.FirstOffset, a.LastOffset, a.DeliveryCount})
			}
			fp := kmsg.NewFetchResponseTopicPartition()
			fp.Partition, fp.RecordBatches, fp.HighWatermark, fp.LastStableOffset = p.Partition, p.Records, 1<<62, 1<<62
			part, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "x", Partition: p.Partition}, &fp, kgo.DefaultDecompressor(), nil)
			for _, r := range part.Records {
				offsets = append(offsets, r.Offset)
			}
		}
	}
	return got, offsets, ackCode
}

// tryFetch is fetch that reports partition errors instead of failing.
func (s *shareClient) tryFetch(ctx context.Context, maxRecords int32, wait time.Duration) ([]acquired, int16) {
	s.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 1
	req.GroupID, req.MemberID = kmsg.StringPtr(s.group), kmsg.StringPtr(s.member)
	req.ShareSessionEpoch = s.epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = int32(wait/time.Millisecond), 1, 1<<20, maxRecords, maxRecords
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = s.topic
	rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	raw, err := s.broker().Request(ctx, req)
	if err != nil {
		return nil, -1
	}
	resp := raw.(*kmsg.ShareFetchResponse)
	if resp.ErrorCode != 0 {
		return nil, resp.ErrorCode
	}
	s.epoch = nextShareEpoch(s.epoch)
	var got []acquired
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				s.t.Logf("share fetch: %v: %s", kerr.ErrorForCode(p.ErrorCode), deref(p.ErrorMessage))
				return nil, p.ErrorCode
			}
			for _, a := range p.AcquiredRecords {
				got = append(got, acquired{a.FirstOffset, a.LastOffset, a.DeliveryCount})
			}
		}
	}
	return got, 0
}

// ack sends a ShareAcknowledge on partition 0 and returns its error code.
func (s *shareClient) ack(ctx context.Context, acks ...[3]int64) int16 {
	s.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 1
	req.GroupID, req.MemberID = kmsg.StringPtr(s.group), kmsg.StringPtr(s.member)
	req.ShareSessionEpoch = s.epoch
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = s.topic
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	for _, a := range acks {
		ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = a[0], a[1], []int8{int8(a[2])}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	raw, err := s.broker().Request(ctx, req)
	if err != nil {
		s.t.Fatalf("ShareAcknowledge: %v", err)
	}
	resp := raw.(*kmsg.ShareAcknowledgeResponse)
	if resp.ErrorCode != 0 {
		s.t.Fatalf("ShareAcknowledge (epoch %d): %v", s.epoch, kerr.ErrorForCode(resp.ErrorCode))
	}
	s.epoch = nextShareEpoch(s.epoch)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// TestShareFetchAcquiresDistinctRecordsAndPersistsAcks: two members
// share one partition by hand-driven ShareFetch requests: each acquires
// records the other does not hold; what one releases the other gets with
// delivery count 2, what one rejects nobody gets again; after a restart of
// the broker, acknowledged records stay acknowledged and the rest (those
// in flight when it stopped) are delivered again.
func TestShareFetchAcquiresDistinctRecordsAndPersistsAcks(t *testing.T) {
	dir := t.TempDir()
	b := startGroupBroker(t, dir)
	createTopic(t, b, "q", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newFranz(t, b.Addr())
	ts, _ := b.topics.byTopicName("q")
	a := &shareClient{t: t, cl: cl, group: "sg", member: "member-a", topic: [16]byte(ts.id)}
	bm := &shareClient{t: t, cl: cl, group: "sg", member: "member-b", topic: [16]byte(ts.id)}
	// The first fetch starts the share-partition at the log end
	// (share.auto.offset.reset=latest): records from then on are shared.
	if got, _, _ := a.fetch(ctx, 10, 10*time.Millisecond); len(got) != 0 {
		t.Fatalf("first fetch on an empty partition acquired %v", got)
	}
	produceEach(t, cl, "q", 40)

	gotA, offA, _ := a.fetch(ctx, 10, time.Second)
	gotB, offB, _ := bm.fetch(ctx, 10, time.Second)
	if want := []acquired{{0, 9, 1}}; !slices.Equal(gotA, want) {
		t.Fatalf("a acquired %v, want %v", gotA, want)
	}
	if want := []acquired{{10, 19, 1}}; !slices.Equal(gotB, want) {
		t.Fatalf("b acquired %v, want %v", gotB, want)
	}
	if len(offA) < 10 || len(offB) < 10 {
		t.Fatalf("records returned: a %d, b %d", len(offA), len(offB))
	}
	want := []SharePartitionStatus{{Group: "sg", Topic: "q", Partition: 0, StartOffset: 0, EndOffset: 20, Acquired: 20}}
	if got := b.SharePartitions("sg"); !slices.Equal(got, want) {
		t.Fatalf("share-partitions %+v, want %+v", got, want)
	}
	// a accepts 0-4, releases 5-7, rejects 8-9; b acknowledges a's
	// records, which it does not hold: INVALID_RECORD_STATE.
	if code := bm.ack(ctx, [3]int64{0, 4, 1}); code != kerr.InvalidRecordState.Code {
		t.Fatalf("b acknowledging a's records: %v, want INVALID_RECORD_STATE", kerr.ErrorForCode(code))
	}
	if code := a.ack(ctx, [3]int64{0, 4, 1}, [3]int64{5, 7, 2}, [3]int64{8, 9, 3}); code != 0 {
		t.Fatalf("a's acknowledgements: %v", kerr.ErrorForCode(code))
	}
	gotB, _, _ = bm.fetch(ctx, 5, time.Second)
	if want := []acquired{{5, 7, 2}, {20, 21, 1}}; !slices.Equal(gotB, want) {
		t.Fatalf("b after a's release acquired %v, want %v", gotB, want)
	}
	// b accepts 10-19 and 5-7 on a fetch that acquires 22; 20-22 stay
	// acquired across the restart.
	if _, _, code := bm.fetch(ctx, 1, 0, [3]int64{5, 7, 1}, [3]int64{10, 19, 1}); code != 0 {
		t.Fatalf("b's acknowledgements: %v", kerr.ErrorForCode(code))
	}

	// b's connection closes: what it held (20-22) is released and
	// written, each with its one delivery; with no session of the group
	// left, the share-partition is dropped from memory.
	cl.Close()
	eventually(t, ctx, "b's records released", func() bool {
		sp := b.shareParts.part(sharePartKey{group: "sg", topic: ts.id, partition: 0})
		sp.mu.Lock()
		defer sp.mu.Unlock()
		return sp.p == nil
	})
	b.Close()
	b = startGroupBroker(t, dir)
	cl = newFranz(t, b.Addr())
	c := &shareClient{t: t, cl: cl, group: "sg", member: "member-c", topic: [16]byte(ts.id)}
	got, _, _ := c.fetch(ctx, 100, time.Second)
	if want := []acquired{{20, 22, 2}, {23, 39, 1}}; !slices.Equal(got, want) {
		// 20-22 were released unacknowledged: delivered again, a second
		// time.
		t.Fatalf("after the restart c acquired %v, want %v", got, want)
	}
}

// produceEach writes n records valued "v<i>" to a one-partition topic,
// one batch each.
func produceEach(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	for i := range n {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShareSessionClosesWithItsConnection: a member whose connection
// closes gives its acquired records back at once (Kafka 4.1+: a share
// session belongs to its connection), well before their 30 s locks
// expire; a session epoch out of step is INVALID_SHARE_SESSION_EPOCH and an
// unknown session SHARE_SESSION_NOT_FOUND.
func TestShareSessionClosesWithItsConnection(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	createTopic(t, b, "q", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, _ := b.topics.byTopicName("q")
	dying := newFranz(t, b.Addr())
	d := &shareClient{t: t, cl: dying, group: "sg", member: "dying", topic: [16]byte(ts.id)}
	d.fetch(ctx, 10, 10*time.Millisecond)
	produceEach(t, dying, "q", 5)
	if got, _, _ := d.fetch(ctx, 10, time.Second); !slices.Equal(got, []acquired{{0, 4, 1}}) {
		t.Fatalf("dying member acquired %v", got)
	}
	dying.Close()

	cl := newFranz(t, b.Addr())
	e := &shareClient{t: t, cl: cl, group: "sg", member: "heir", topic: [16]byte(ts.id)}
	start := time.Now()
	var got []acquired
	for len(got) == 0 && time.Since(start) < 10*time.Second {
		got, _, _ = e.fetch(ctx, 10, 500*time.Millisecond)
	}
	if !slices.Equal(got, []acquired{{0, 4, 2}}) {
		t.Fatalf("after the dying member's connection closed the heir acquired %v, want 0-4 delivered a second time", got)
	}

	// Epochs: the heir's session is at epoch e.epoch; another is refused.
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 1
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("sg"), kmsg.StringPtr("heir"), e.epoch+5
	raw, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := raw.(*kmsg.ShareFetchResponse).ErrorCode; code != kerr.InvalidShareSessionEpoch.Code {
		t.Errorf("wrong epoch: %v, want INVALID_SHARE_SESSION_EPOCH", kerr.ErrorForCode(code))
	}
	req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("nobody"), 3
	raw, err = cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := raw.(*kmsg.ShareFetchResponse).ErrorCode; code != kerr.ShareSessionNotFound.Code {
		t.Errorf("no session: %v, want SHARE_SESSION_NOT_FOUND", kerr.ErrorForCode(code))
	}
}

// TestClusterShareAcksSurviveLeaderFailover: on a three-node cluster, a
// member acknowledges part of what it acquired on a partition's leader;
// the leader is killed. The new leader reads the share-partition's state
// from the share coordinator (which may have moved too): the acknowledged
// records are never delivered again, the ones in flight are, with their
// delivery counted.
func TestClusterShareAcksSurviveLeaderFailover(t *testing.T) {
	values := maps.Clone(coordinatorValues)
	values["share.coordinator.state.topic.num.partitions"] = "1"
	c := newTestCluster(t, 3, values)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The partition's leader is also the share coordinator (the leader
	// of __share_group_state's one partition): the kill takes both.
	if err := c.node(1).get().ensureShareStateTopic(ctx); err != nil {
		t.Fatal(err)
	}
	first := c.leaderOf(sharecoord.StateTopic, 0).id
	replicas := []int32{first}
	for _, n := range c.nodes {
		if n.id != first {
			replicas = append(replicas, n.id)
		}
	}
	c.createAssigned("sq", [][]int32{replicas}, map[string]string{"min.insync.replicas": "2"})
	var ts *topicState
	eventually(t, ctx, "sq on its leader", func() bool {
		ts, _ = c.node(first).get().topics.byTopicName("sq")
		return ts != nil
	})
	cl := c.liveClient(kgo.RequiredAcks(kgo.AllISRAcks()))
	to := func(id int32) *kgo.Broker { return cl.Broker(int(id)) }
	a := &shareClient{t: t, cl: cl, group: "sg", member: "a", topic: [16]byte(ts.id), to: to(first)}
	a.fetch(ctx, 10, 10*time.Millisecond)
	produceEach(t, cl, "sq", 30)
	got1, _, _ := a.fetch(ctx, 10, time.Second)
	got2, _, _ := a.fetch(ctx, 10, time.Second)
	if !slices.Equal(got1, []acquired{{0, 9, 1}}) || !slices.Equal(got2, []acquired{{10, 19, 1}}) {
		t.Fatalf("a acquired %v then %v", got1, got2)
	}
	if code := a.ack(ctx, [3]int64{0, 9, 1}); code != 0 {
		t.Fatalf("a's acknowledgement: %v", kerr.ErrorForCode(code))
	}

	c.kill(c.node(first))
	var leader *clusterNode
	eventually(t, ctx, "a new leader of sq-0", func() bool {
		leader = c.leaderOf("sq", 0)
		return leader != nil && leader.id != first
	})
	b := &shareClient{t: t, cl: cl, group: "sg", member: "b", topic: [16]byte(ts.id), to: to(leader.id)}
	var got []acquired
	var code int16
	for start := time.Now(); len(got) == 0 && time.Since(start) < 30*time.Second; {
		got, code = b.tryFetch(ctx, 100, 500*time.Millisecond)
		if code != 0 {
			t.Logf("share fetch on node %d: %v", leader.id, kerr.ErrorForCode(code))
		}
	}
	if want := []acquired{{10, 19, 2}, {20, 29, 1}}; !slices.Equal(got, want) {
		t.Fatalf("on the new leader b acquired %v, want %v (0-9 were acknowledged)", got, want)
	}
}

// TestShareFetchReadCommitted: with the group's share.isolation.level
// read_committed, a share fetch stops at the last stable offset (an open
// transaction's records wait) and never delivers an aborted transaction's
// records or the markers: they are archived unseen, and the records of the
// committed transaction are delivered. read_uncommitted gets them all.
func TestShareFetchReadCommitted(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	createTopic(t, b, "tq", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newFranz(t, b.Addr())
	setGroupConfigs(t, cl, "rc", "share.auto.offset.reset", "earliest", "share.isolation.level", "read_committed")
	setGroupConfigs(t, cl, "ru", "share.auto.offset.reset", "earliest")
	ts, _ := b.topics.byTopicName("tq")
	txn := func(id string, commit bool, values ...string) *kgo.Client {
		p, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID(id), kgo.DefaultProduceTopic("tq"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			if err := p.EndTransaction(ctx, kgo.TransactionEndTry(true)); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	// 0-1 aborted, 2 its marker; 3-4 committed, 5 its marker; 6 open.
	aborted := txn("t-abort", false, "a0", "a1")
	if err := aborted.EndTransaction(ctx, kgo.TransactionEndTry(false)); err != nil {
		t.Fatal(err)
	}
	txn("t-commit", true, "c0", "c1")
	open := txn("t-open", false, "o0")

	rc := &shareClient{t: t, cl: cl, group: "rc", member: "m", topic: [16]byte(ts.id)}
	got, offsets, _ := rc.fetch(ctx, 100, time.Second)
	if want := []acquired{{3, 4, 1}}; !slices.Equal(got, want) || !slices.Contains(offsets, 3) {
		t.Fatalf("read_committed acquired %v (records %v), want %v", got, offsets, want)
	}
	if err := open.EndTransaction(ctx, kgo.TransactionEndTry(true)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = rc.fetch(ctx, 100, time.Second); !slices.Equal(got, []acquired{{6, 6, 1}}) {
		t.Fatalf("read_committed after the open transaction committed acquired %v, want 6", got)
	}
	ru := &shareClient{t: t, cl: cl, group: "ru", member: "m", topic: [16]byte(ts.id)}
	if got, _, _ = ru.fetch(ctx, 100, time.Second); !slices.Equal(got, []acquired{{0, 1, 1}, {3, 4, 1}, {6, 6, 1}}) {
		// The markers (2, 5, 7) are never delivered; the aborted records are.
		t.Fatalf("read_uncommitted acquired %v", got)
	}
}

// TestShareRenewAcknowledgement: RENEW (KIP-1222) extends a lock and
// leaves the record acquired; with the group's
// share.renew.acknowledge.enable false it is INVALID_REQUEST.
func TestShareRenewAcknowledgement(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	createTopic(t, b, "rq", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newFranz(t, b.Addr())
	setGroupConfigs(t, cl, "rg", "share.auto.offset.reset", "earliest")
	produceEach(t, cl, "rq", 2)
	ts, _ := b.topics.byTopicName("rq")
	m := &shareClient{t: t, cl: cl, group: "rg", member: "m", topic: [16]byte(ts.id)}
	if got, _, _ := m.fetch(ctx, 10, time.Second); !slices.Equal(got, []acquired{{0, 1, 1}}) {
		t.Fatalf("acquired %v", got)
	}
	if code := m.ack(ctx, [3]int64{0, 0, 4}); code != 0 {
		t.Fatalf("renew: %v", kerr.ErrorForCode(code))
	}
	if st := b.SharePartitions("rg"); len(st) != 1 || st[0].Acquired != 2 {
		t.Fatalf("after a renew: %+v, want both still acquired", st)
	}
	setGroupConfigs(t, cl, "rg", "share.renew.acknowledge.enable", "false")
	if code := m.ack(ctx, [3]int64{1, 1, 4}); code != kerr.InvalidRequest.Code {
		t.Fatalf("renew with share.renew.acknowledge.enable=false: %v, want INVALID_REQUEST", kerr.ErrorForCode(code))
	}
}

// TestShareFetchAcquireModes: in the default batch-optimized mode the
// batch holding the last record asked for is acquired whole (when that at
// most doubles MaxRecords); ShareFetch v2's record_limit mode stops at
// MaxRecords, splitting the batch.
func TestShareFetchAcquireModes(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	createTopic(t, b, "mq", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newFranz(t, b.Addr())
	setGroupConfigs(t, cl, "batch", "share.auto.offset.reset", "earliest")
	setGroupConfigs(t, cl, "strict", "share.auto.offset.reset", "earliest")
	var recs []*kgo.Record
	for i := range 7 {
		recs = append(recs, &kgo.Record{Topic: "mq", Value: fmt.Appendf(nil, "v%d", i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil { // one batch of 7
		t.Fatal(err)
	}
	ts, _ := b.topics.byTopicName("mq")
	for _, c := range []struct {
		group string
		mode  int8
		want  []acquired
	}{{"batch", 0, []acquired{{0, 6, 1}}}, {"strict", 1, []acquired{{0, 3, 1}}}} {
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 2
		req.GroupID, req.MemberID, req.ShareAcquireMode = kmsg.StringPtr(c.group), kmsg.StringPtr("m"), c.mode
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 1000, 1, 1<<20, 4, 4
		req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: [16]byte(ts.id), Partitions: []kmsg.ShareFetchRequestTopicPartition{{Partition: 0}}}}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		var got []acquired
		for _, tr := range resp.Topics {
			for _, p := range tr.Partitions {
				for _, a := range p.AcquiredRecords {
					got = append(got, acquired{a.FirstOffset, a.LastOffset, a.DeliveryCount})
				}
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("mode %d: acquired %v, want %v", c.mode, got, c.want)
		}
	}
}

// TestShareLockExpiryArchivesDurably: a record whose locks expire until
// the delivery-count limit is archived, and the archive is written: after
// a restart the record is not delivered again, the next one is.
func TestShareLockExpiryArchivesDurably(t *testing.T) {
	dir := t.TempDir()
	values := func() config.Values {
		v, err := LoadConfig("", map[string]string{"group.share.min.record.lock.duration.ms": "1000",
			"group.share.min.delivery.count.limit": "2"})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	start := func() *Broker {
		b := startBrokerWith(t, Config{LogDir: dir, Values: values()})
		<-b.coordSync.ready
		return b
	}
	b := start()
	createTopic(t, b, "eq", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newFranz(t, b.Addr())
	setGroupConfigs(t, cl, "eg", "share.auto.offset.reset", "earliest", "share.record.lock.duration.ms", "1000",
		"share.delivery.count.limit", "2")
	produceEach(t, cl, "eq", 2)
	ts, _ := b.topics.byTopicName("eq")
	m := &shareClient{t: t, cl: cl, group: "eg", member: "m", topic: [16]byte(ts.id)}
	// Offset 0 is acquired twice and left to expire each time; offset 1
	// is accepted at once.
	for delivery := int16(1); delivery <= 2; delivery++ {
		var got []acquired
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(got) == 0; {
			got, _, _ = m.fetch(ctx, 1, 3*time.Second)
		}
		if want := []acquired{{0, 0, delivery}}; !slices.Equal(got, want) {
			t.Fatalf("delivery %d: acquired %v, want %v", delivery, got, want)
		}
		if delivery == 1 {
			if got, _, _ = m.fetch(ctx, 1, time.Second); !slices.Equal(got, []acquired{{1, 1, 1}}) {
				t.Fatalf("acquired %v, want offset 1", got)
			}
			if code := m.ack(ctx, [3]int64{1, 1, 1}); code != 0 {
				t.Fatal(kerr.ErrorForCode(code))
			}
		}
	}
	eventually(t, ctx, "offset 0 archived and written", func() bool {
		sp := b.shareParts.part(sharePartKey{group: "eg", topic: ts.id, partition: 0})
		sp.mu.Lock()
		defer sp.mu.Unlock()
		return sp.p != nil && sp.p.StartOffset() == 2 && sp.written == sp.changes
	})
	cl.Close()
	b.Close()
	b = start()
	cl = newFranz(t, b.Addr())
	produceEach(t, cl, "eq", 1)
	m = &shareClient{t: t, cl: cl, group: "eg", member: "m2", topic: [16]byte(ts.id)}
	if got, _, _ := m.fetch(ctx, 10, 3*time.Second); !slices.Equal(got, []acquired{{2, 2, 1}}) {
		t.Fatalf("after the restart acquired %v, want only the new offset 2", got)
	}
}
