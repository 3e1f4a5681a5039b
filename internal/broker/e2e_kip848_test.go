package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGroupKIP848Franz: two franz-go consumers using the consumer group
// protocol (KIP-848, server-side assignment) split a topic's partitions and
// consume every record exactly once; ConsumerGroupDescribe shows both
// members with disjoint assignments covering every partition.
func TestGroupKIP848Franz(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "kip848", 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 400
	prod := newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := range n {
		prod.Produce(ctx, &kgo.Record{Topic: "kip848", Value: []byte(fmt.Sprint(i))}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	seen := map[string]int{}
	// progress is signalled on every event the wait below depends on: a
	// member consumed records, or its assignment changed.
	progress := make(chan struct{}, 1)
	signal := func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	onAssign := func(context.Context, *kgo.Client, map[string][]int32) { signal() }
	var wg sync.WaitGroup
	for m := range 2 {
		cl := newFranz(t, b.Addr(), kgo.ConsumerGroup("g848"), kgo.ConsumeTopics("kip848"),
			kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()),
			kgo.OnPartitionsAssigned(onAssign), kgo.OnPartitionsRevoked(onAssign),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID(fmt.Sprint("m", m)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				fs := cl.PollFetches(cctx)
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)]++
					mu.Unlock()
				})
				if fs.NumRecords() > 0 {
					signal()
				}
				cl.CommitUncommittedOffsets(cctx)
			}
		}()
	}
	// Wait until both members hold partitions and every record is in.
	admCl := newFranz(t, b.Addr())
	for {
		if ctx.Err() != nil {
			mu.Lock()
			t.Fatalf("consumed %d distinct of %d", len(seen), n)
		}
		mu.Lock()
		all := len(seen) == n
		mu.Unlock()
		if all && membersWithPartitions(t, ctx, admCl, "g848") == 2 {
			break
		}
		select {
		case <-progress:
		case <-ctx.Done():
		}
	}
	stop()
	wg.Wait()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
}

// membersWithPartitions describes a consumer-protocol group and returns how
// many members hold partitions, checking the assignments are disjoint.
func membersWithPartitions(t *testing.T, ctx context.Context, cl *kgo.Client, group string) int {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		return 0
	}
	owned := map[int32]string{}
	holders := 0
	for _, m := range resp.Groups[0].Members {
		if len(m.Assignment.TopicPartitions) > 0 {
			holders++
		}
		for _, tp := range m.Assignment.TopicPartitions {
			for _, p := range tp.Partitions {
				if prev, dup := owned[p]; dup {
					t.Fatalf("partition %d assigned to %s and %s", p, prev, m.MemberID)
				}
				owned[p] = m.MemberID
			}
		}
	}
	return holders
}

// TestKIP848RegexMatchesInternalTopics: a regex subscription that names an
// internal topic gets it assigned, as in Kafka, which resolves the regex
// against every topic the member may describe.
func TestKIP848RegexMatchesInternalTopics(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "user-events", 2)
	rc := dialRaw(t, b)
	// The offsets topic exists once a group coordinator has been looked up.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey = 3, "regex-internal"
	if resp := rc.roundTrip(fc, 1).(*kmsg.FindCoordinatorResponse); resp.ErrorCode != 0 {
		t.Fatalf("find coordinator: %d", resp.ErrorCode)
	}
	offsetsID, ok := b.topics.byTopicName("__consumer_offsets")
	if !ok {
		t.Fatal("no __consumer_offsets topic")
	}
	userID, _ := b.topics.byTopicName("user-events")

	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberEpoch, hb.RebalanceTimeoutMillis = 1, "regex-internal", 0, 10000
	hb.MemberID = "m1-aaaaaaaaaaaaaaaaaa"
	hb.SubscribedTopicRegex = kmsg.StringPtr(`user-.*|__consumer_offsets`)
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	got := map[[16]byte]int{}
	for corr := int32(2); corr < 50 && len(got) < 2; corr++ {
		resp := rc.roundTrip(hb, corr).(*kmsg.ConsumerGroupHeartbeatResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: error %d: %v", resp.ErrorCode, resp.ErrorMessage)
		}
		hb.MemberEpoch = resp.MemberEpoch
		if resp.Assignment != nil {
			for _, tp := range resp.Assignment.Topics {
				got[tp.TopicID] = len(tp.Partitions)
			}
		}
		if len(got) < 2 {
			<-time.After(time.Duration(resp.HeartbeatIntervalMillis) * time.Millisecond)
		}
	}
	if got[offsetsID.id] != len(offsetsID.partitions) || got[userID.id] != 2 {
		t.Fatalf("assigned %v; want all %d partitions of __consumer_offsets and 2 of user-events", got, len(offsetsID.partitions))
	}
}
