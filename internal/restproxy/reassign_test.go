package restproxy

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// startClusterProxy is startProxy on a cluster of n broker processes.
func startClusterProxy(t *testing.T, n int) (*testProxy, *devcluster.Cluster) {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dc, err := devcluster.New(devcluster.Config{Binary: bin, Dir: dir, Nodes: n, StopTimeout: 10 * time.Second,
		Overrides: map[string]string{"samsa.schema.registry.listener": "", "samsa.http.listener": ""}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster logs:\n%s", dc.LogTails(20))
		}
		dc.Close()
		if keep := os.Getenv("SAMSA_KEEP_FAILED"); keep != "" && t.Failed() {
			dst := filepath.Join(keep, fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()))
			out, err := exec.Command("cp", "-r", dir, dst).CombinedOutput()
			t.Logf("kept the cluster's directory in %s: %v %s", dst, err, out)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := dc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(dc.Addrs()...)}, Timeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.Handler())
	cl, err := kgo.NewClient(kgo.SeedBrokers(dc.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		p.Close()
		cl.Close()
	})
	admin := kadm.NewClient(cl)
	md, err := admin.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &testProxy{broker: dc.Addrs()[0], url: srv.URL, clusterID: md.Cluster, admin: admin}, dc
}

// TestRestReassignmentsAndBrokerReplicas on three brokers: each broker's
// partition-replicas are exactly the replicas Metadata places on it; a
// reassignment held in progress (its new replica's broker stopped) is
// listed for the cluster, the topic and the partition with its adding
// replica; once cancelled, none is listed and the partition's is 404.
func TestRestReassignmentsAndBrokerReplicas(t *testing.T) {
	tp, dc := startClusterProxy(t, 3)
	ctx := t.Context()
	md, err := tp.admin.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// a holds the partition, b is the replica added, and neither is the
	// controller, which must stay up to run the move.
	var others []int32
	for _, id := range md.Brokers.NodeIDs() {
		if id != md.Controller {
			others = append(others, id)
		}
	}
	slices.Sort(others)
	a, b := others[0], others[1]
	code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, fmt.Sprintf(`{"topic_name":"moving","replicas_assignments":{"0":[%d],"1":[%d]}}`, a, b))
	expect(t, "create", code, got, 201, "")
	code, got = tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"spread","partitions_count":6,"replication_factor":2}`)
	expect(t, "create spread", code, got, 201, "")

	// Brokers apply the metadata log each at its own pace, so the two
	// reads are compared until they agree on both new topics.
	for _, id := range md.Brokers.NodeIDs() {
		var have, want []string
		eventually(t, fmt.Sprintf("broker %d's replicas", id), func() bool {
			want = brokerReplicasOf(t, tp, id)
			code, got := tp.do(t, "GET", tp.v3(fmt.Sprintf("/brokers/%d/partition-replicas", id)), "", "")
			expect(t, "partition-replicas", code, got, 200, "")
			have = nil
			for _, r := range field(got, "data").([]any) {
				if field(r, "broker_id") != float64(id) {
					t.Fatalf("broker %d lists %v", id, r)
				}
				have = append(have, fmt.Sprintf("%s-%v leader=%v", field(r, "topic_name"), field(r, "partition_id"), field(r, "is_leader")))
			}
			slices.Sort(have)
			return slices.Equal(have, want) && len(want) >= 4 // 12 spread replicas over 3 brokers, moving's too
		})
	}
	code, got = tp.do(t, "GET", tp.v3("/brokers/9/partition-replicas"), "", "")
	expect(t, "unknown broker", code, got, 404, `{"error_code":404,"message":"Broker 9 cannot be found."}`)

	empty := func(self string) string {
		return fmt.Sprintf(`{"kind":"KafkaReassignmentList","metadata":{"self":%q,"next":null},"data":[]}`, tp.link(self))
	}
	code, got = tp.do(t, "GET", tp.v3("/topics/-/partitions/-/reassignment"), "", "")
	expect(t, "none yet", code, got, 200, empty("/topics/-/partitions/-/reassignment"))

	if err := dc.Node(b).Kill(); err != nil {
		t.Fatal(err)
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("moving", 0, []int32{a, b})
	if res, err := tp.admin.AlterPartitionAssignments(ctx, req); err != nil || res.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, res.Error())
	}
	one := fmt.Sprintf(`{"kind":"KafkaReassignment",
		"metadata":{"self":%q,"resource_name":"crn:///kafka=%s/topic=moving/partition=0/reassignment"},
		"cluster_id":%q,"topic_name":"moving","partition_id":0,"adding_replicas":[%d],"removing_replicas":[],
		"replicas":{"related":%q}}`, tp.link("/topics/moving/partitions/0/reassignment"), tp.clusterID, tp.clusterID, b,
		tp.link("/topics/moving/partitions/0/replicas"))
	list := func(self string) string {
		return fmt.Sprintf(`{"kind":"KafkaReassignmentList","metadata":{"self":%q,"next":null},"data":[%s]}`, tp.link(self), one)
	}
	code, got = tp.do(t, "GET", tp.v3("/topics/-/partitions/-/reassignment"), "", "")
	expect(t, "the cluster's", code, got, 200, list("/topics/-/partitions/-/reassignment"))
	code, got = tp.do(t, "GET", tp.v3("/topics/moving/partitions/-/reassignment"), "", "")
	expect(t, "the topic's", code, got, 200, list("/topics/moving/partitions/-/reassignment"))
	code, got = tp.do(t, "GET", tp.v3("/topics/moving/partitions/0/reassignment"), "", "")
	expect(t, "the partition's", code, got, 200, one)
	code, got = tp.do(t, "GET", tp.v3("/topics/moving/partitions/1/reassignment"), "", "")
	expect(t, "a partition not moving", code, got, 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
	code, got = tp.do(t, "GET", tp.v3("/topics/spread/partitions/-/reassignment"), "", "")
	expect(t, "a topic not moving", code, got, 200, empty("/topics/spread/partitions/-/reassignment"))
	code, got = tp.do(t, "GET", tp.v3("/topics/nope/partitions/-/reassignment"), "", "")
	expect(t, "unknown topic", code, got, 404, `{"error_code":40403,"message":"This server does not host this topic-partition."}`)
	code, got = tp.do(t, "GET", tp.v3("/topics/moving/partitions/5/reassignment"), "", "")
	expect(t, "unknown partition", code, got, 404, `{"error_code":40402,"message":"Partition not found."}`)

	var cancelReq kadm.AlterPartitionAssignmentsReq
	cancelReq.CancelAssign("moving", 0)
	if res, err := tp.admin.AlterPartitionAssignments(ctx, cancelReq); err != nil || res.Error() != nil {
		t.Fatalf("cancel: %v %v", err, res.Error())
	}
	code, got = tp.do(t, "GET", tp.v3("/topics/-/partitions/-/reassignment"), "", "")
	expect(t, "none after the cancel", code, got, 200, empty("/topics/-/partitions/-/reassignment"))
	code, got = tp.do(t, "GET", tp.v3("/topics/moving/partitions/0/reassignment"), "", "")
	expect(t, "the partition's after the cancel", code, got, 404, "")
}

// brokerReplicasOf is what an independent client's Metadata places on a
// broker, as "topic-partition leader=bool", sorted.
func brokerReplicasOf(t *testing.T, tp *testProxy, id int32) []string {
	t.Helper()
	all, err := tp.admin.Metadata(kadm.WithAuthorizedOps(t.Context()), "moving", "spread")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range all.Topics.Names() {
		for _, pd := range all.Topics[name].Partitions {
			if slices.Contains(pd.Replicas, id) {
				out = append(out, fmt.Sprintf("%s-%d leader=%v", name, pd.Partition, pd.Leader == id))
			}
		}
	}
	slices.Sort(out)
	return out
}
