package restproxy

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startMember848 is a real franz-go consumer speaking the consumer group
// protocol (KIP-848: ConsumerGroupHeartbeat, the broker assigns).
func startMember848(t *testing.T, broker, group, clientID, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ClientID(clientID), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic), kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
}

// TestRestConsumerGroupsKIP848: a group of two consumer-protocol members
// is described as ConsumerGroupDescribe tells it (type CONSUMER, not
// mixed, the broker's assignor, its members and their assignments, all
// compared with an independent client's ConsumerGroupDescribe), beside a
// classic group described as CLASSIC.
func TestRestConsumerGroupsKIP848(t *testing.T) {
	tp := startProxy(t, Config{})
	ctx := t.Context()
	if _, err := tp.admin.CreateTopic(ctx, 4, 1, nil, "views"); err != nil {
		t.Fatal(err)
	}
	startMember848(t, tp.broker, "modern", "modern-a", "views")
	startMember848(t, tp.broker, "modern", "modern-b", "views")
	startMember(t, tp.broker, "legacy", "legacy-a", "views")
	var g kadm.DescribedConsumerGroup
	eventually(t, "a stable consumer group of two members with two partitions each", func() bool {
		d, err := tp.admin.DescribeConsumerGroups(ctx, "modern")
		if err != nil {
			return false
		}
		g = d["modern"]
		if g.Err != nil || g.State != "Stable" || len(g.Members) != 2 {
			return false
		}
		for _, m := range g.Members {
			if len(m.Assignment["views"]) != 2 {
				return false
			}
		}
		return true
	})
	eventually(t, "a stable classic group", func() bool {
		d, err := tp.admin.DescribeGroups(ctx, "legacy")
		return err == nil && d["legacy"].State == "Stable"
	})

	code, got := tp.do(t, "GET", tp.v3("/consumer-groups/modern"), "", "")
	c := tp.clusterID
	expect(t, "the consumer group", code, got, 200, fmt.Sprintf(`{
		"kind": "KafkaConsumerGroup",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/consumer-group=modern"},
		"cluster_id": %q, "consumer_group_id": "modern", "is_simple": false, "partition_assignor": %q,
		"state": "STABLE", "type": "CONSUMER", "is_mixed_consumer_group": false,
		"coordinator": {"related": %q}, "consumers": {"related": %q}, "lag_summary": {"related": %q}}`,
		tp.link("/consumer-groups/modern"), c, c, g.AssignorName, tp.link("/brokers/1"),
		tp.link("/consumer-groups/modern/consumers"), tp.link("/consumer-groups/modern/lag-summary")))
	if g.AssignorName == "" {
		t.Fatal("the broker named no assignor")
	}

	code, got = tp.do(t, "GET", tp.v3("/consumer-groups"), "", "")
	expect(t, "list", code, got, 200, "")
	var types []string
	for _, d := range field(got, "data").([]any) {
		types = append(types, fmt.Sprint(field(d, "consumer_group_id"), "=", field(d, "type")))
	}
	if want := []string{"legacy=CLASSIC", "modern=CONSUMER"}; !slices.Equal(types, want) {
		t.Fatalf("groups %v, want %v", types, want)
	}

	code, got = tp.do(t, "GET", tp.v3("/consumer-groups/modern/consumers"), "", "")
	expect(t, "consumers", code, got, 200, "")
	var have, want []string
	for _, m := range g.Members {
		want = append(want, m.MemberID+" "+m.ClientID)
	}
	for _, d := range field(got, "data").([]any) {
		have = append(have, fmt.Sprint(field(d, "consumer_id"), " ", field(d, "client_id")))
	}
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Fatalf("consumers %v, want %v", have, want)
	}
	for _, m := range g.Members {
		code, got := tp.do(t, "GET", tp.v3("/consumer-groups/modern/consumers/"+m.MemberID+"/assignments"), "", "")
		expect(t, "assignments", code, got, 200, "")
		var parts []string
		for _, a := range field(got, "data").([]any) {
			parts = append(parts, fmt.Sprint(field(a, "topic_name"), "-", field(a, "partition_id")))
		}
		var wantParts []string
		for p := range m.Assignment["views"] {
			wantParts = append(wantParts, fmt.Sprint("views-", p))
		}
		slices.Sort(wantParts)
		if !slices.Equal(parts, wantParts) {
			t.Fatalf("member %s assignments %v, want %v", m.ClientID, parts, wantParts)
		}
	}
	code, got = tp.do(t, "GET", tp.v3("/consumer-groups/legacy"), "", "")
	if code != 200 || field(got, "type") != "CLASSIC" || field(got, "is_mixed_consumer_group") != false || field(got, "partition_assignor") == "" {
		t.Fatalf("the classic group: %d %v", code, got)
	}
	code, got = tp.do(t, "GET", tp.v3("/consumer-groups/nobody"), "", "")
	expect(t, "unknown group", code, got, 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
}

// TestMixedConsumerGroup: a consumer group is mixed while a member is on
// the classic protocol or does not say (ConsumerGroupDescribe v0), as
// Confluent tells it from Kafka's MemberDescription.upgraded().
func TestMixedConsumerGroup(t *testing.T) {
	for _, c := range []struct {
		types []int8
		mixed bool
	}{
		{[]int8{1, 1}, false},
		{[]int8{1, 0}, true},
		{[]int8{-1}, true},
		{nil, false},
	} {
		g := kadm.DescribedConsumerGroup{Group: "g", State: "Stable"}
		for i, mt := range c.types {
			g.Members = append(g.Members, kadm.ConsumerGroupMember{MemberID: fmt.Sprint(i), MemberType: mt})
		}
		if d := fromConsumerGroup(g); d.Mixed != c.mixed || d.Type != groupTypeConsumer {
			t.Errorf("member types %v: mixed %v type %s, want mixed %v", c.types, d.Mixed, d.Type, c.mixed)
		}
	}
}
