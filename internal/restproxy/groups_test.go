package restproxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupMember is a real franz-go consumer of a group that polls until the
// test ends and commits only when told, and the records it has seen.
type groupMember struct {
	cl   *kgo.Client
	mu   sync.Mutex
	seen map[string]bool
}

func startMember(t *testing.T, broker, group, clientID, topic string) *groupMember {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ClientID(clientID), kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	m := &groupMember{cl: cl, seen: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			m.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) { m.seen[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = true })
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
	return m
}

func (m *groupMember) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}

// eventually retries cond until it holds or 30s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// produceTo writes n records to each given partition of topic.
func produceTo(t *testing.T, broker, topic string, n int, partitions ...int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, p := range partitions {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "v%d", i)})
		}
	}
	if err := cl.ProduceSync(t.Context(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func TestRestConsumerGroups(t *testing.T) {
	tp := startProxy(t, Config{})
	c := tp.clusterID
	ctx := t.Context()
	if _, err := tp.admin.CreateTopic(ctx, 4, 1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}

	status, body := tp.do(t, "GET", tp.v3("/consumer-groups"), "", "")
	expect(t, "no groups", status, body, 200, fmt.Sprintf(`{"kind":"KafkaConsumerGroupList","metadata":{"self":%q,"next":null},"data":[]}`,
		tp.link("/consumer-groups")))

	a := startMember(t, tp.broker, "readers", "reader-a", "clicks")
	b := startMember(t, tp.broker, "readers", "reader-b", "clicks")
	var g kadm.DescribedGroup
	eventually(t, "a stable group of two members with two partitions each", func() bool {
		d, err := tp.admin.DescribeGroups(ctx, "readers")
		if err != nil {
			return false
		}
		g = d["readers"]
		if g.State != "Stable" || len(g.Members) != 2 {
			return false
		}
		for _, m := range g.Members {
			if c, ok := m.Assigned.AsConsumer(); !ok || len(c.Topics) != 1 || len(c.Topics[0].Partitions) != 2 {
				return false
			}
		}
		return true
	})

	produceTo(t, tp.broker, "clicks", 10, 0, 1, 2, 3)
	eventually(t, "the members consume all 40 records", func() bool { return a.count()+b.count() == 40 })
	for _, m := range []*groupMember{a, b} {
		if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatal(err)
		}
	}

	group := fmt.Sprintf(`{
		"kind": "KafkaConsumerGroup",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/consumer-group=readers"},
		"cluster_id": %q,
		"consumer_group_id": "readers",
		"is_simple": false,
		"partition_assignor": %q,
		"state": "STABLE",
		"type": "CLASSIC",
		"is_mixed_consumer_group": false,
		"coordinator": {"related": %q},
		"consumers": {"related": %q},
		"lag_summary": {"related": %q}
	}`, tp.link("/consumer-groups/readers"), c, c, g.Protocol, tp.link("/brokers/1"),
		tp.link("/consumer-groups/readers/consumers"), tp.link("/consumer-groups/readers/lag-summary"))
	if g.Protocol != "cooperative-sticky" {
		t.Fatalf("group protocol %q, want franz-go's default cooperative-sticky", g.Protocol)
	}
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups"), "", "")
	expect(t, "list groups", status, body, 200, fmt.Sprintf(`{"kind":"KafkaConsumerGroupList","metadata":{"self":%q,"next":null},"data":[%s]}`,
		tp.link("/consumer-groups"), group))
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers"), "", "")
	expect(t, "get group", status, body, 200, group)

	// The members, sorted by ID, each with its assignments as an
	// independent admin client sees them.
	members := slices.Clone(g.Members)
	slices.SortFunc(members, func(x, y kadm.DescribedGroupMember) int {
		if x.MemberID < y.MemberID {
			return -1
		}
		return 1
	})
	consumerJSON := func(m kadm.DescribedGroupMember) string {
		path := "/consumer-groups/readers/consumers/" + m.MemberID
		return fmt.Sprintf(`{
			"kind": "KafkaConsumer",
			"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/consumer-group=readers/consumer=%s"},
			"cluster_id": %q,
			"consumer_group_id": "readers",
			"consumer_id": %q,
			"instance_id": null,
			"client_id": %q,
			"assignments": {"related": %q}
		}`, tp.link(path), c, m.MemberID, c, m.MemberID, m.ClientID, tp.link(path+"/assignments"))
	}
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers/consumers"), "", "")
	expect(t, "list consumers", status, body, 200, fmt.Sprintf(`{"kind":"KafkaConsumerList","metadata":{"self":%q,"next":null},"data":[%s,%s]}`,
		tp.link("/consumer-groups/readers/consumers"), consumerJSON(members[0]), consumerJSON(members[1])))
	owner := map[int32]kadm.DescribedGroupMember{}
	for _, m := range members {
		status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers/consumers/"+m.MemberID), "", "")
		expect(t, "get consumer", status, body, 200, consumerJSON(m))

		assigned, _ := m.Assigned.AsConsumer()
		parts := slices.Sorted(slices.Values(assigned.Topics[0].Partitions))
		var items []string
		for _, p := range parts {
			owner[p] = m
			path := fmt.Sprintf("/consumer-groups/readers/consumers/%s/assignments/clicks/partitions/%d", m.MemberID, p)
			item := fmt.Sprintf(`{
				"kind": "KafkaConsumerAssignment",
				"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/consumer-group=readers/consumer=%s/assignment=clicks/partition=%d"},
				"cluster_id": %q,
				"consumer_group_id": "readers",
				"consumer_id": %q,
				"topic_name": "clicks",
				"partition_id": %d,
				"partition": {"related": %q},
				"lag": {"related": %q}
			}`, tp.link(path), c, m.MemberID, p, c, m.MemberID, p, tp.link(fmt.Sprintf("/topics/clicks/partitions/%d", p)),
				tp.link(fmt.Sprintf("/consumer-groups/readers/lags/clicks/partitions/%d", p)))
			items = append(items, item)
			status, body = tp.do(t, "GET", tp.v3(path), "", "")
			expect(t, "get assignment", status, body, 200, item)
		}
		path := "/consumer-groups/readers/consumers/" + m.MemberID + "/assignments"
		status, body = tp.do(t, "GET", tp.v3(path), "", "")
		expect(t, "list assignments", status, body, 200, fmt.Sprintf(`{"kind":"KafkaConsumerAssignmentList","metadata":{"self":%q,"next":null},"data":[%s,%s]}`,
			tp.link(path), items[0], items[1]))
	}
	if len(owner) != 4 {
		t.Fatalf("assigned partitions %v, want all 4", owner)
	}

	// All caught up and committed: no lag. Then 5 more records to
	// partition 2 and 3 to partition 0, not committed: lag 5 and 3.
	lagJSON := func(p int32, current, end int64) string {
		m := owner[p]
		return fmt.Sprintf(`{
			"kind": "KafkaConsumerLag",
			"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/consumer-group=readers/lag=clicks/partition=%d"},
			"cluster_id": %q,
			"consumer_group_id": "readers",
			"topic_name": "clicks",
			"partition_id": %d,
			"current_offset": %d,
			"log_end_offset": %d,
			"lag": %d,
			"consumer_id": %q,
			"instance_id": null,
			"client_id": %q
		}`, tp.link(fmt.Sprintf("/consumer-groups/readers/lags/clicks/partitions/%d", p)), c, p, c, p, current, end, end-current,
			m.MemberID, m.ClientID)
	}
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers/lags"), "", "")
	expect(t, "lags caught up", status, body, 200, fmt.Sprintf(`{"kind":"KafkaConsumerLagList","metadata":{"self":%q,"next":null},"data":[%s,%s,%s,%s]}`,
		tp.link("/consumer-groups/readers/lags"), lagJSON(0, 10, 10), lagJSON(1, 10, 10), lagJSON(2, 10, 10), lagJSON(3, 10, 10)))

	produceTo(t, tp.broker, "clicks", 5, 2)
	produceTo(t, tp.broker, "clicks", 3, 0)
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers/lags"), "", "")
	expect(t, "lags behind", status, body, 200, fmt.Sprintf(`{"kind":"KafkaConsumerLagList","metadata":{"self":%q,"next":null},"data":[%s,%s,%s,%s]}`,
		tp.link("/consumer-groups/readers/lags"), lagJSON(2, 10, 15), lagJSON(0, 10, 13), lagJSON(1, 10, 10), lagJSON(3, 10, 10)))
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers/lags/clicks/partitions/0"), "", "")
	expect(t, "get lag", status, body, 200, lagJSON(0, 10, 13))

	m2 := owner[2]
	status, body = tp.do(t, "GET", tp.v3("/consumer-groups/readers/lag-summary"), "", "")
	expect(t, "lag summary", status, body, 200, fmt.Sprintf(`{
		"kind": "KafkaConsumerGroupLagSummary",
		"metadata": {"self": %q, "resource_name": "crn:///kafka=%s/consumer-group=readers/lag-summary"},
		"cluster_id": %q,
		"consumer_group_id": "readers",
		"max_lag_consumer_id": %q,
		"max_lag_instance_id": null,
		"max_lag_client_id": %q,
		"max_lag_topic_name": "clicks",
		"max_lag_partition_id": 2,
		"max_lag": 5,
		"total_lag": 8,
		"max_lag_consumer": {"related": %q},
		"max_lag_partition": {"related": %q}
	}`, tp.link("/consumer-groups/readers/lag-summary"), c, c, m2.MemberID, m2.ClientID,
		tp.link("/consumer-groups/readers/consumers/"+m2.MemberID), tp.link("/topics/clicks/partitions/2")))

	// What does not exist is 404 with Confluent's messages.
	notFound := `{"error_code":404,"message":"HTTP 404 Not Found"}`
	for _, path := range []string{
		"/consumer-groups/nobody",
		"/consumer-groups/nobody/consumers",
		"/consumer-groups/readers/consumers/not-a-member",
		"/consumer-groups/readers/consumers/not-a-member/assignments",
		"/consumer-groups/readers/consumers/" + m2.MemberID + "/assignments/clicks/partitions/9",
		"/consumer-groups/readers/lags/clicks/partitions/9",
		"/consumer-groups/readers/lags/other/partitions/0",
	} {
		status, body = tp.do(t, "GET", tp.v3(path), "", "")
		expect(t, path, status, body, 404, notFound)
	}
	for _, path := range []string{"/consumer-groups/nobody/lags", "/consumer-groups/nobody/lag-summary"} {
		status, body = tp.do(t, "GET", tp.v3(path), "", "")
		expect(t, path, status, body, 404, `{"error_code":404,"message":"Consumer Group nobody could not be found."}`)
	}
	status, body = tp.do(t, "GET", "/v3/clusters/other/consumer-groups", "", "")
	expect(t, "unknown cluster", status, body, 404, `{"error_code":404,"message":"Cluster other cannot be found."}`)
}
