package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// setGroupConfigs sets a group's configs (the GROUP config resource).
func setGroupConfigs(t *testing.T, cl *kgo.Client, group string, kv ...string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i < len(kv); i += 2 {
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Value, rc.Op = kv[i], kmsg.StringPtr(kv[i+1]), kmsg.IncrementalAlterConfigOpSet
		r.Configs = append(r.Configs, rc)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Resources[0].ErrorCode; code != 0 {
		t.Fatalf("set group configs %v: code %d %s", kv, code, deref(resp.Resources[0].ErrorMessage))
	}
}

// TestShareGroupFranz: franz-go's share consumer (kgo.ShareGroup) on one
// partition. Three consumers share it, each getting records the others do
// not; together every record once. Then, with share.delivery.count.limit
// 3: a record released once comes back (delivery 2) and is accepted; a
// rejected record never comes back; a record released every time is
// delivered exactly three times and then archived.
func TestShareGroupFranz(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	createTopic(t, b, "sq", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prod := newFranz(t, b.Addr())
	setGroupConfigs(t, prod, "split", "share.auto.offset.reset", "earliest")
	const n = 600
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "sq", Value: fmt.Appendf(nil, "r%03d", i)})
	}
	for i := 0; i < n; i += 20 { // batches of 20: consumers split batches too
		if err := prod.ProduceSync(ctx, recs[i:i+20]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	seen := map[string][]int{} // value -> consumers that got it
	var wg sync.WaitGroup
	cctx, stop := context.WithCancel(ctx)
	for c := range 3 {
		cl := newFranz(t, b.Addr(), kgo.ShareGroup("split"), kgo.ConsumeTopics("sq"), kgo.ShareMaxRecords(25))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				fs := cl.PollFetches(cctx)
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)] = append(seen[string(r.Value)], c)
					mu.Unlock()
					r.Ack(kgo.AckAccept)
					time.Sleep(time.Millisecond) // let the others take their turn
				})
			}
		}()
	}
	eventually(t, ctx, "every record delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n
	})
	time.Sleep(500 * time.Millisecond) // a duplicate would show now
	stop()
	wg.Wait()
	per := map[int]int{}
	for v, cs := range seen {
		if len(cs) != 1 {
			t.Errorf("%s delivered %d times (consumers %v)", v, len(cs), cs)
		}
		per[cs[0]]++
	}
	if len(per) != 3 {
		t.Errorf("records per consumer %v: want all three to get some", per)
	}

	// Release, reject, archive at the delivery-count limit.
	setGroupConfigs(t, prod, "fates", "share.auto.offset.reset", "earliest", "share.delivery.count.limit", "3")
	createTopic(t, b, "fates", 1)
	var fates []*kgo.Record
	for _, v := range []string{"accept", "release-once", "reject", "release-always", "accept-2"} {
		fates = append(fates, &kgo.Record{Topic: "fates", Value: []byte(v)})
	}
	if err := prod.ProduceSync(ctx, fates...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl := newFranz(t, b.Addr(), kgo.ShareGroup("fates"), kgo.ConsumeTopics("fates"))
	deliveries := map[string][]int32{}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			deliveries[v] = append(deliveries[v], r.DeliveryCount())
			switch {
			case v == "reject":
				r.Ack(kgo.AckReject)
			case v == "release-always", v == "release-once" && r.DeliveryCount() == 1:
				r.Ack(kgo.AckRelease)
			default:
				r.Ack(kgo.AckAccept)
			}
		})
		if len(deliveries["release-always"]) >= 3 && len(deliveries["release-once"]) >= 2 {
			// One more poll round shows nothing more comes.
			if soon := time.Now().Add(2 * time.Second); soon.Before(deadline) {
				deadline = soon
			}
		}
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int32{"accept": {1}, "accept-2": {1}, "reject": {1}, "release-once": {1, 2}, "release-always": {1, 2, 3}}
	for v, w := range want {
		if got := deliveries[v]; !slices.Equal(got, w) {
			t.Errorf("%s delivered with counts %v, want %v", v, got, w)
		}
	}
	var all []string
	for v := range deliveries {
		all = append(all, v)
	}
	if len(all) != len(want) {
		t.Errorf("delivered %s, want only %d values", strings.Join(all, ","), len(want))
	}
}

// TestGroupConfigsReachTheCoordinator: a group's own heartbeat interval
// (share.heartbeat.interval.ms, consumer.heartbeat.interval.ms on the GROUP
// resource) is what its members are told, over the broker's default.
func TestGroupConfigsReachTheCoordinator(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	createTopic(t, b, "gc", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newFranz(t, b.Addr())
	setGroupConfigs(t, cl, "gc-share", "share.heartbeat.interval.ms", "6000")
	setGroupConfigs(t, cl, "gc-consumer", "consumer.heartbeat.interval.ms", "7000")
	if r := shareHeartbeat(t, ctx, cl, "gc-share", "m1", 0, "gc"); r.ErrorCode != 0 || r.HeartbeatIntervalMillis != 6000 {
		t.Errorf("share member told %d ms (error %d), want the group's 6000", r.HeartbeatIntervalMillis, r.ErrorCode)
	}
	if r := shareHeartbeat(t, ctx, cl, "gc-share-default", "m1", 0, "gc"); r.HeartbeatIntervalMillis != 5000 {
		t.Errorf("share member of a group without configs told %d ms, want the broker's 5000", r.HeartbeatIntervalMillis)
	}
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "gc-consumer", "c1", 0, 30000
	req.SubscribedTopicNames = []string{"gc"}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 7000 {
		t.Errorf("consumer member told %d ms (error %d), want the group's 7000", resp.HeartbeatIntervalMillis, resp.ErrorCode)
	}
}
