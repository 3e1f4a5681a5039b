package console

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// opsEventually polls cond until it holds or 30 s pass.
func opsEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestOpsPage on three brokers (one test: a cluster is slow to start).
// The balancer's state comes from the active controller's admin URL, a
// dead URL is named with its error, and without admin URLs the page says
// what it needs. Moving a partition and electing leaders take effect as
// an independent client sees; bad input is a 400 that changes nothing. A
// reassignment held in progress (its new replica's broker killed) is
// listed with its adding replica and cancelled from the page.
func TestOpsPage(t *testing.T) {
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dc, err := devcluster.New(devcluster.Config{Binary: bin, Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second,
		Overrides: map[string]string{"samsa.schema.registry.listener": "", "samsa.rest.listener": ""}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster logs:\n%s", dc.LogTails(20))
		}
		dc.Close()
	})
	sctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := dc.Start(sctx); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(dc.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(sctx)
	if err != nil {
		t.Fatal(err)
	}
	// a holds the partition, b is the replica a held move adds (killed),
	// ctrl is the active controller, which must stay up.
	ctrl := md.Controller
	var others []int32
	for _, id := range md.Brokers.NodeIDs() {
		if id != ctrl {
			others = append(others, id)
		}
	}
	slices.Sort(others)
	a, b := others[0], others[1]
	var admins []string
	for _, n := range dc.Nodes() {
		admins = append(admins, "http://"+n.HTTPAddr())
	}
	const deadURL = "http://127.0.0.1:1"
	tc := startConsoleOn(t, dc.Node(ctrl).Addr(), Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(dc.Addrs()...)},
		AdminURLs: append(admins, deadURL)})

	// Without admin URLs the balancer section says what it needs.
	bare := startConsoleOn(t, dc.Node(ctrl).Addr(), Config{})
	if st, body := bare.get("/ops"); st != 200 || !strings.Contains(body, `id="balancer-unconfigured"`) || !strings.Contains(body, "needs a Samsa broker's admin URL") {
		t.Fatalf("/ops without admin URLs: status %d:\n%s", st, body)
	}

	// An admin URL that accepts and never answers is named as failed
	// once its short timeout passes; the page does not wait longer.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	slow := startConsoleOn(t, dc.Node(ctrl).Addr(), Config{AdminURLs: []string{"http://" + silent.Addr().String(), "http://" + dc.Node(ctrl).HTTPAddr()}})
	start := time.Now()
	st, body := slow.get("/ops")
	if took := time.Since(start); took > opsAdminTimeout+3*time.Second {
		t.Errorf("/ops with a silent admin URL took %s", took)
	}
	wantContains(t, body, `id="balancer-state"`, "http://"+silent.Addr().String()+`</code>: <span class="badge bad">failed</span>`, "deadline exceeded")
	if st != 200 {
		t.Fatalf("/ops with a silent admin URL: status %d", st)
	}

	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "moving", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{a}
	ct.ReplicaAssignment = append(ct.ReplicaAssignment, ra)
	one := "1" // the cluster's default of 2 would refuse acks=all on one replica
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "min.insync.replicas", &one
	ct.Configs = append(ct.Configs, cfg)
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx(t), tc.Client); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create moving: %v %+v", err, resp)
	}
	replicas := func() []int32 {
		t.Helper()
		m, err := tc.Admin.Metadata(ctx(t), "moving")
		if err != nil {
			t.Fatal(err)
		}
		return m.Topics["moving"].Partitions[0].Replicas
	}
	opsEventually(t, "moving-0 in the metadata", func() bool { return slices.Equal(replicas(), []int32{a}) })
	for i := range 20 {
		if err := tc.Client.ProduceSync(ctx(t), &kgo.Record{Topic: "moving", Value: []byte(fmt.Sprintf("record %d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	st, body = tc.get("/ops")
	if st != 200 {
		t.Fatalf("/ops: status %d:\n%s", st, body)
	}
	wantContains(t, body, `id="reassignments-empty"`, `id="balancer-state"`, "Enabled", ">off<",
		fmt.Sprintf("From node %d, the active controller", ctrl), deadURL+"</code>: <span class=\"badge bad\">failed</span>")
	for _, n := range dc.Nodes() {
		role := "standby"
		if n.ID == ctrl {
			role = "active controller"
		}
		wantContains(t, body, fmt.Sprintf("http://%s</code>: <span class=\"badge%s\">%s</span> node %d", n.HTTPAddr(), map[bool]string{true: " ok", false: ""}[n.ID == ctrl], role, n.ID))
	}

	// Moving a partition: bad input first, none of which moves anything.
	for want, form := range map[string]url.Values{
		"is not a broker ID":           {"topic": {"moving"}, "partition": {"0"}, "replicas": {"1,x"}},
		"list the broker IDs":          {"topic": {"moving"}, "partition": {"0"}, "replicas": {" "}},
		"is listed twice":              {"topic": {"moving"}, "partition": {"0"}, "replicas": {"1,1"}},
		"is not a partition number":    {"topic": {"moving"}, "partition": {"-1"}, "replicas": {"1"}},
		"the topic is empty":           {"partition": {"0"}, "replicas": {"1"}},
		"UNKNOWN_TOPIC_OR_PARTITION":   {"topic": {"nope"}, "partition": {"0"}, "replicas": {"1"}},
		"INVALID_REPLICA_ASSIGNMENT: ": {"topic": {"moving"}, "partition": {"0"}, "replicas": {"42"}},
	} {
		st, body, _ := tc.post("/ops/reassign", form)
		if st != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("reassign %v: status %d, want 400 with %q:\n%s", form, st, want, body)
		}
	}
	if got := replicas(); !slices.Equal(got, []int32{a}) {
		t.Fatalf("bad input moved moving-0 to %v", got)
	}
	target := fmt.Sprintf("%d, %d", ctrl, a)
	if st, body, loc := tc.post("/ops/reassign", url.Values{"topic": {"moving"}, "partition": {"0"}, "replicas": {target}}); st != http.StatusSeeOther || !strings.Contains(loc, "Reassigning") {
		t.Fatalf("reassign: status %d to %q:\n%s", st, loc, body)
	}
	opsEventually(t, "moving-0 on [ctrl a]", func() bool { return slices.Equal(replicas(), []int32{ctrl, a}) })
	leader := func() int32 {
		t.Helper()
		m, err := tc.Admin.Metadata(ctx(t), "moving")
		if err != nil {
			t.Fatal(err)
		}
		return m.Topics["moving"].Partitions[0].Leader
	}
	// The move keeps a as the leader: it is still a replica.
	if l := leader(); l != a {
		t.Fatalf("moving-0's leader after the move is %d, want %d (still a replica)", l, a)
	}

	// Preferred-leader elections.
	if st, body, loc := tc.post("/ops/elect", url.Values{"topic": {"moving"}}); st != http.StatusSeeOther || !strings.Contains(loc, "Preferred-leader+election+of+the+partitions+of+moving") {
		t.Fatalf("elect: status %d to %q:\n%s", st, loc, body)
	}
	if st, body, _ := tc.post("/ops/elect", url.Values{"topic": {"moving"}, "partition": {"7"}}); st != http.StatusBadRequest || !strings.Contains(body, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("elect an unknown partition: status %d:\n%s", st, body)
	}
	if st, body, _ := tc.post("/ops/elect", url.Values{"partition": {"0"}}); st != http.StatusBadRequest || !strings.Contains(body, "a partition needs its topic") {
		t.Errorf("elect a partition without a topic: status %d:\n%s", st, body)
	}
	opsEventually(t, "moving-0 led by its preferred replica", func() bool { return leader() == ctrl })

	// A move slowed by a replication throttle shows its copy's progress;
	// it is cancelled from the page, after a confirmation.
	// Random values, so compression leaves about 1 MiB to copy: 100 s
	// at the throttle's rate.
	var batch []*kgo.Record
	for range 1000 {
		v := make([]byte, 1024)
		crand.Read(v)
		batch = append(batch, &kgo.Record{Topic: "moving", Value: v})
	}
	if err := tc.Client.ProduceSync(ctx(t), batch...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rate, all := "10000", "*"
	if _, err := tc.Admin.AlterBrokerConfigs(ctx(t), []kadm.AlterConfig{{Name: "leader.replication.throttled.rate", Value: &rate},
		{Name: "follower.replication.throttled.rate", Value: &rate}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Admin.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{{Name: "leader.replication.throttled.replicas", Value: &all},
		{Name: "follower.replication.throttled.replicas", Value: &all}}, "moving"); err != nil {
		t.Fatal(err)
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("moving", 0, []int32{ctrl, a, b})
	if res, err := tc.Admin.AlterPartitionAssignments(ctx(t), req); err != nil || res.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, res.Error())
	}
	progressRE := regexp.MustCompile(fmt.Sprintf(`broker %d: <meter min="0" max="100" value="([0-9]+)"`, b))
	opsEventually(t, "the throttled move's progress on the page", func() bool {
		_, body := tc.get("/ops")
		m := progressRE.FindStringSubmatch(body)
		return m != nil && m[1] != "100" && strings.Contains(body, fmt.Sprintf("<td>%d, %d, %d</td><td>%d</td><td>-</td>", ctrl, a, b, b))
	})
	cancelForm := url.Values{"topic": {"moving"}, "partition": {"0"}}
	if st, body, _ := tc.post("/ops/reassignments/cancel", cancelForm); st != 200 || !strings.Contains(body, `id="ops-confirm"`) {
		t.Fatalf("cancel without confirm: status %d:\n%s", st, body)
	}
	moving := func() int {
		t.Helper()
		lr, err := tc.Admin.ListPartitionReassignments(ctx(t), kadm.TopicsSet{"moving": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		lr.Each(func(kadm.ListPartitionReassignmentsResponse) { n++ })
		return n
	}
	if n := moving(); n != 1 {
		t.Fatalf("an unconfirmed cancel cancelled: %d moving", n)
	}
	cancelForm.Set("confirm", "yes")
	if st, body, loc := tc.post("/ops/reassignments/cancel", cancelForm); st != http.StatusSeeOther || !strings.Contains(loc, "Cancelled") {
		t.Fatalf("cancel: status %d to %q:\n%s", st, loc, body)
	}
	if n := moving(); n != 0 {
		t.Fatalf("%d moving after the cancel", n)
	}
	opsEventually(t, "moving-0 back on [ctrl a]", func() bool { return slices.Equal(replicas(), []int32{ctrl, a}) })
	if st, body, _ := tc.post("/ops/reassignments/cancel", cancelForm); st != http.StatusBadRequest || !strings.Contains(body, "NO_REASSIGNMENT_IN_PROGRESS") {
		t.Errorf("cancel of a partition not moving: status %d:\n%s", st, body)
	}
	if _, body := tc.get("/ops"); !strings.Contains(body, `id="reassignments-empty"`) {
		t.Fatalf("/ops after the cancel:\n%s", body)
	}

	// A move held by a dead broker: its progress is unknown, the page
	// says why, and it does not wait the whole request timeout for the
	// dead broker.
	if err := dc.Node(b).Kill(); err != nil {
		t.Fatal(err)
	}
	if res, err := tc.Admin.AlterPartitionAssignments(ctx(t), req); err != nil || res.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, res.Error())
	}
	start = time.Now()
	st, body = tc.get("/ops")
	took := time.Since(start)
	t.Logf("/ops with a broker down took %s", took)
	if took > 2*opsLogDirsTimeout {
		t.Errorf("/ops took %s with a broker down", took)
	}
	if st != 200 {
		t.Fatalf("/ops with a move in progress: status %d:\n%s", st, body)
	}
	wantContains(t, body, `id="reassignments-table"`, `<a href="/topics/moving">moving</a>`,
		fmt.Sprintf("<td>%d, %d, %d</td><td>%d</td><td>-</td>", ctrl, a, b, b), fmt.Sprintf("broker %d: unknown", b),
		fmt.Sprintf("broker %d&#39;s log sizes", b), "1 partition moving")

	if st, body, _ := tc.post("/ops/reassignments/cancel", cancelForm); st != http.StatusSeeOther {
		t.Fatalf("cancel with the broker down: status %d:\n%s", st, body)
	}
	if n := moving(); n != 0 {
		t.Fatalf("%d moving after the cancel", n)
	}

	// Turned on, the balancer's state says so.
	on := "true"
	if _, err := tc.Admin.AlterBrokerConfigs(ctx(t), []kadm.AlterConfig{{Name: "samsa.balancer.enable", Value: &on}}); err != nil {
		t.Fatal(err)
	}
	opsEventually(t, "the balancer enabled on the page", func() bool {
		_, body := tc.get("/ops")
		return strings.Contains(body, `<span class="badge ok">yes</span>`) && !strings.Contains(body, ">off<")
	})
}
