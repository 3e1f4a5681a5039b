package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// opsRoles: nodes 1-3 combined (the quorum), node 4 a broker that joins
// later.
func opsRoles(id int32) string {
	if id <= 3 {
		return "broker,controller"
	}
	return "broker"
}

// startOpsCluster lays out four nodes and starts the first three.
func startOpsCluster(t *testing.T) (*devcluster.Cluster, *kadm.Client) {
	t.Helper()
	dc, err := devcluster.New(devcluster.Config{Binary: samsaBinary(t), Dir: t.TempDir(), Nodes: 4, Roles: opsRoles, StopTimeout: 10 * time.Second, Overrides: noRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node logs:\n%s", dc.LogTails(30))
		}
		dc.Close()
	})
	for id := int32(1); id <= 3; id++ {
		if err := dc.Node(id).Start(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dc.WaitReady(ctx); err != nil {
		t.Fatalf("start: %v\n%s", err, dc.LogTails(20))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(dc.Node(1).Addr(), dc.Node(2).Addr(), dc.Node(3).Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return dc, kadm.NewClient(cl)
}

// replicaMap is each partition's replicas.
func replicaMap(t *testing.T, adm *kadm.Client, topic string) map[int32][]int32 {
	t.Helper()
	md, err := adm.Metadata(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]int32{}
	for _, p := range md.Topics[topic].Partitions {
		out[p.Partition] = p.Replicas
	}
	return out
}

func holds(replicas map[int32][]int32, broker int32) int {
	n := 0
	for _, r := range replicas {
		if slices.Contains(r, broker) {
			n++
		}
	}
	return n
}

// TestClusterOperations is issue 15's operations through the CLI on
// processes: a reassignment planned with cluster reassign --generate onto
// two brokers, executed (--wait) and verified, in Kafka's formats; a
// fourth broker added with add-broker --wait (it gets nothing until asked)
// and --rebalance (it gets replicas); a decommission refused while a topic
// needs every broker, then one that drains broker 1, waits for it to be
// stopped and unregisters it. No record is lost on the way.
func TestClusterOperations(t *testing.T) {
	dc, adm := startOpsCluster(t)
	c := &testCluster{t: t, addr: dc.Node(1).Addr() + "," + dc.Node(2).Addr(), timeout: 30 * time.Second}
	c.ok("", "topic", "create", "ops", "-p", "4", "-r", "2", "-c", "min.insync.replicas=1")
	c.ok(strings.Repeat("record\n", 400), "produce", "ops", "--acks", "all")

	// generate: onto brokers 1 and 2 only.
	dir := t.TempDir()
	topicsFile := filepath.Join(dir, "topics.json")
	os.WriteFile(topicsFile, []byte(`{"version":1,"topics":[{"topic":"ops"}]}`), 0o644)
	out := c.ok("", "cluster", "reassign", "--generate", "--topics-to-move-json-file", topicsFile, "--broker-list", "1,2")
	current, proposed := splitGenerate(t, out)
	if len(current.Partitions) != 4 || len(proposed.Partitions) != 4 {
		t.Fatalf("generate:\n%s", out)
	}
	for _, p := range proposed.Partitions {
		if slices.Contains(p.Replicas, 3) || len(p.Replicas) != 2 || len(p.LogDirs) != 2 {
			t.Errorf("proposed %+v: want two replicas on brokers 1 and 2", p)
		}
	}
	planFile := filepath.Join(dir, "plan.json")
	os.WriteFile(planFile, []byte(strings.SplitN(strings.TrimPrefix(out[strings.Index(out, "Proposed partition reassignment configuration\n"):], "Proposed partition reassignment configuration\n"), "\n", 2)[0]), 0o644)
	out = c.ok("", "cluster", "reassign", "--execute", "--reassignment-json-file", planFile, "--wait", "--interval", "100ms")
	for _, want := range []string{"Current partition replica assignment\n\n{\"version\":1", "Save this to use as the --reassignment-json-file option during rollback",
		"Successfully started partition reassignments for ops-0,ops-1,ops-2,ops-3", "done: 4 partition(s) moved"} {
		if !strings.Contains(out, want) {
			t.Errorf("execute lacks %q:\n%s", want, out)
		}
	}
	if n := holds(replicaMap(t, adm, "ops"), 3); n != 0 {
		t.Errorf("broker 3 still holds %d replicas of ops after the plan", n)
	}
	out = c.ok("", "cluster", "reassign", "--verify", "--reassignment-json-file", planFile)
	for p := range 4 {
		if want := "Reassignment of partition ops-" + string(rune('0'+p)) + " is completed."; !strings.Contains(out, want) {
			t.Errorf("verify lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "Clearing broker-level throttles on brokers 1,2,3") || !strings.Contains(out, "Clearing topic-level throttles on topic ops") {
		t.Errorf("verify did not clear the throttles:\n%s", out)
	}
	if out := c.ok("", "cluster", "reassign", "--list"); out != "No partition reassignments found.\n" {
		t.Errorf("list: %q", out)
	}

	// A new broker: add-broker --wait waits for it, and it holds nothing.
	var wg sync.WaitGroup
	var addOut string
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := c.withTimeout(30*time.Second).run("", "cluster", "add-broker", "4", "--wait")
		addOut = r.stdout
		if r.err != nil {
			t.Errorf("add-broker --wait: %v\n%s", r.err, r.stdout)
		}
	}()
	c.fails("broker 4 is not registered", "cluster", "add-broker", "4")
	if err := dc.Node(4).Start(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !strings.Contains(addOut, "broker 4 is live: endpoint "+dc.Node(4).Addr()+", rack -, 0 replica(s)") {
		t.Errorf("add-broker:\n%s", addOut)
	}
	out = c.ok("", "cluster", "add-broker", "4", "--rebalance", "--max-moves", "100")
	if holds(replicaMap(t, adm, "ops"), 4) == 0 {
		t.Errorf("add-broker --rebalance moved nothing onto broker 4:\n%s", out)
	}
	if !strings.Contains(out, "done:") || !strings.Contains(out, "no moves") {
		t.Errorf("add-broker --rebalance printed no progress or did not end with an empty plan:\n%s", out)
	}

	// A topic on every broker cannot lose one.
	c.ok("", "topic", "create", "wide", "-p", "1", "-r", "4")
	// The broker the dry run asks may learn of the topic a moment later.
	waitUntil(t, 30*time.Second, "the new topic in every broker's metadata", func() bool {
		return c.run("", "cluster", "decommission", "2", "--dry-run").err != nil
	})
	c.fails("cannot drain broker 2: wide-0 (replication factor 4) would have more replicas than the 3 other live broker(s)",
		"cluster", "decommission", "2", "--dry-run")
	c.ok("", "topic", "delete", "wide")

	// Decommission broker 1: drained, then unregistered once stopped.
	var dry string
	waitUntil(t, 30*time.Second, "a dry run without the deleted topic", func() bool {
		r := c.run("", "cluster", "decommission", "1", "--dry-run")
		dry = r.stdout
		return r.err == nil
	})
	if !strings.Contains(dry, "draining") {
		t.Errorf("decommission --dry-run:\n%s", dry)
	}
	lines := &lineWaiter{lines: make(chan string, 1000)}
	var decOut string
	var decErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := c.printingTo(lines).run("", "cluster", "decommission", "1", "--max-moves", "2")
		decOut, decErr = r.stdout, r.err
	}()
	for line := range lines.lines {
		if strings.Contains(line, "stop its process now") {
			break
		}
	}
	if n := holds(replicaMap(t, adm, "ops"), 1); n != 0 {
		t.Errorf("broker 1 holds %d replicas of ops when decommission says it is drained", n)
	}
	if err := dc.Node(1).Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if decErr != nil || !strings.Contains(decOut, "broker 1 unregistered") || !strings.Contains(decOut, "round 2:") {
		t.Fatalf("decommission: %v\n%s", decErr, decOut)
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	cl, err := kgo.NewClient(kgo.SeedBrokers(dc.Node(2).Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Node 2 learns of the unregistration from the metadata log a moment
	// after the controller commits it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := req.RequestWith(t.Context(), cl)
		if err != nil {
			t.Fatal(err)
		}
		registered := slices.ContainsFunc(resp.Brokers, func(b kmsg.DescribeClusterResponseBroker) bool { return b.NodeID == 1 })
		if !registered {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("broker 1 is still registered 10 s after decommission")
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The replication throttle, on the brokers left.
	c.addr = dc.Node(2).Addr() + "," + dc.Node(3).Addr()
	c.ok("", "topic", "create", "t", "-p", "2", "-r", "1")
	runThrottledReassign(t, c, adm, [3]int32{2, 3, 4}, func(current map[int32][]int32, got map[string]string) {
		checkThrottles(t, [3]int32{2, 3, 4}, current, got)
	})

	ends, err := adm.ListEndOffsets(t.Context(), "ops")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 400 {
		t.Errorf("ops ends at %d records after the moves, want 400", total)
	}
}

// splitGenerate reads --generate's two plans.
func splitGenerate(t *testing.T, out string) (reassignmentJSON, reassignmentJSON) {
	t.Helper()
	lines := strings.Split(out, "\n")
	var current, proposed reassignmentJSON
	for i, l := range lines {
		var into *reassignmentJSON
		switch l {
		case "Current partition replica assignment":
			into = &current
		case "Proposed partition reassignment configuration":
			into = &proposed
		default:
			continue
		}
		if i+1 >= len(lines) || json.Unmarshal([]byte(lines[i+1]), into) != nil {
			t.Fatalf("no plan after %q:\n%s", l, out)
		}
	}
	return current, proposed
}
