package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// kafkaTool runs one of Kafka's tools' main classes (cls) with args, under
// the command SAMSA_KAFKA_TOOLS_JAVA names (java and its classpath, as
// test/compat/java/run.sh sets it), and returns its stdout.
type kafkaTool struct {
	t       *testing.T
	java    []string
	command string // --command-config file
}

func (k kafkaTool) run(cls string, args ...string) (string, error) {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(k.t.Context(), 2*time.Minute)
	defer cancel()
	full := append(append(slices.Clone(k.java[1:]), cls), args...)
	if k.command != "" {
		full = append(full, "--command-config", k.command)
	}
	cmd := exec.CommandContext(ctx, k.java[0], full...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v\nstdout: %s\nstderr: %s", cls, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

func (k kafkaTool) ok(cls string, args ...string) string {
	k.t.Helper()
	out, err := k.run(cls, args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

const (
	reassignTool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
	topicTool    = "org.apache.kafka.tools.TopicCommand"
)

// TestKafkaToolsReassign: Kafka's own kafka-reassign-partitions.sh
// (ReassignPartitionsCommand, kafka-tools of test/compat/java's pinned
// version) carries out a reassignment on three Samsa brokers from a plan
// samsa cluster reassign --generate wrote, and its --verify sees it
// complete; kafka-topics.sh --describe (TopicCommand) shows the moving
// replicas meanwhile, while the broker the move copies to is frozen
// (SIGSTOP) so the move holds still; and a plan Kafka's --generate wrote
// is carried out by samsa cluster reassign (kadm) and verified by both.
// It runs when SAMSA_KAFKA_TOOLS_JAVA is set (make compat's
// kafka-reassign feature).
func TestKafkaToolsReassign(t *testing.T) {
	java := strings.Fields(os.Getenv("SAMSA_KAFKA_TOOLS_JAVA"))
	if len(java) == 0 {
		t.Skip("SAMSA_KAFKA_TOOLS_JAVA is not set (make compat sets it)")
	}
	// A long session: the frozen broker stays registered and unfenced
	// while Kafka's tool checks it exists.
	dc, err := devcluster.New(devcluster.Config{Binary: samsaBinary(t), Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second,
		Overrides: map[string]string{"broker.session.timeout.ms": "30000", "samsa.schema.registry.listener": ""}})
	if err != nil {
		t.Fatal(err)
	}
	var frozen int
	t.Cleanup(func() {
		if frozen != 0 {
			syscall.Kill(frozen, syscall.SIGCONT)
		}
		if t.Failed() {
			t.Logf("node logs:\n%s", dc.LogTails(30))
		}
		dc.Close()
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dc.Start(ctx); err != nil {
		t.Fatalf("start: %v\n%s", err, dc.LogTails(20))
	}
	// The broker to freeze is not the active controller: its Raft leader.
	cl, err := kgo.NewClient(kgo.SeedBrokers(dc.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	q, err := describeQuorum(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var f int32
	var others []string
	var otherIDs []string
	for _, n := range dc.Nodes() {
		if f == 0 && n.ID != q.LeaderID {
			f = n.ID
			continue
		}
		others = append(others, n.Addr())
		otherIDs = append(otherIDs, fmt.Sprint(n.ID))
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "admin.properties")
	// A request to the frozen broker gives up after 3 s and goes to another.
	os.WriteFile(config, []byte("request.timeout.ms=3000\ndefault.api.timeout.ms=90000\n"), 0o644)
	k := kafkaTool{t: t, java: java, command: config}
	boot := strings.Join(others, ",")
	c := &testCluster{t: t, addr: boot, timeout: 30 * time.Second}

	c.ok("", "topic", "create", "kt", "-p", "3", "-r", "2", "-c", "min.insync.replicas=1")
	c.ok(strings.Repeat("record\n", 300), "produce", "kt", "--acks", "all")
	topics := filepath.Join(dir, "topics.json")
	os.WriteFile(topics, []byte(`{"version":1,"topics":[{"topic":"kt"}]}`), 0o644)

	// Off the broker to freeze, by samsa (kadm).
	off := filepath.Join(dir, "off.json")
	os.WriteFile(off, []byte(proposedPlan(t, c.ok("", "cluster", "reassign", "--generate", "--topics-to-move-json-file", topics,
		"--broker-list", strings.Join(otherIDs, ",")))), 0o644)
	c.ok("", "cluster", "reassign", "--execute", "--reassignment-json-file", off, "--wait", "--interval", "100ms")

	// Back onto it: samsa's plan over the three, run by Kafka's tool.
	back := filepath.Join(dir, "back.json")
	plan := proposedPlan(t, c.ok("", "cluster", "reassign", "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3"))
	os.WriteFile(back, []byte(plan), 0o644)
	if !strings.Contains(plan, fmt.Sprint(f)) {
		t.Fatalf("samsa's plan over brokers 1-3 puts nothing on broker %d: %s", f, plan)
	}
	frozen = dc.Node(f).Pid()
	if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	out := k.ok(reassignTool, "--bootstrap-server", boot, "--execute", "--reassignment-json-file", back)
	if !strings.Contains(out, "Successfully started partition reassignment") {
		t.Fatalf("Kafka's --execute:\n%s", out)
	}
	// Kafka's tool sends the same JSON back as the rollback plan.
	if !strings.Contains(out, "Current partition replica assignment\n\n{\"version\":1,\"partitions\":[") {
		t.Errorf("Kafka's --execute printed no current assignment:\n%s", out)
	}
	out = k.ok(topicTool, "--bootstrap-server", boot, "--describe", "--topic", "kt")
	adding := regexp.MustCompile(`Adding Replicas: ` + fmt.Sprint(f) + `\b`)
	if !adding.MatchString(out) || !strings.Contains(out, "Removing Replicas: ") {
		t.Errorf("kafka-topics.sh --describe during the move shows no adding replica %d and removing replicas:\n%s", f, out)
	}
	t.Logf("kafka-topics.sh --describe during the move:\n%s", out)
	out = k.ok(reassignTool, "--bootstrap-server", boot, "--verify", "--reassignment-json-file", back)
	if !strings.Contains(out, "is still in progress.") {
		t.Errorf("Kafka's --verify while the broker is frozen:\n%s", out)
	}
	if err := syscall.Kill(frozen, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	frozen = 0
	waitUntil(t, 2*time.Minute, "Kafka's --verify to see every move completed", func() bool {
		out = k.ok(reassignTool, "--bootstrap-server", boot, "--verify", "--reassignment-json-file", back)
		return !strings.Contains(out, "in progress") && strings.Count(out, "is completed.") == 3
	})
	if !strings.Contains(out, "Clearing broker-level throttles on brokers") || !strings.Contains(out, "Clearing topic-level throttles on topic kt") {
		t.Errorf("Kafka's --verify did not clear the throttles:\n%s", out)
	}
	if out := c.ok("", "cluster", "reassign", "--verify", "--reassignment-json-file", back); strings.Count(out, "is completed.") != 3 {
		t.Errorf("samsa's --verify of the same plan:\n%s", out)
	}

	// Kafka's plan, run by samsa (kadm).
	kplan := filepath.Join(dir, "kafka-plan.json")
	os.WriteFile(kplan, []byte(proposedPlan(t, k.ok(reassignTool, "--bootstrap-server", boot, "--generate",
		"--topics-to-move-json-file", topics, "--broker-list", strings.Join(otherIDs, ",")))), 0o644)
	out = c.ok("", "cluster", "reassign", "--execute", "--reassignment-json-file", kplan, "--wait", "--interval", "100ms")
	if !strings.Contains(out, "done: 3 partition(s) moved") {
		t.Errorf("samsa's --execute of Kafka's plan:\n%s", out)
	}
	if out := k.ok(reassignTool, "--bootstrap-server", boot, "--verify", "--reassignment-json-file", kplan); strings.Count(out, "is completed.") != 3 {
		t.Errorf("Kafka's --verify of its own plan run by samsa:\n%s", out)
	}
	if out := k.ok(reassignTool, "--bootstrap-server", boot, "--list"); !strings.Contains(out, "No partition reassignments found.") {
		t.Errorf("Kafka's --list: %s", out)
	}
	adm := kadm.NewClient(cl)
	if n := holds(replicaMap(t, adm, "kt"), f); n != 0 {
		t.Errorf("broker %d holds %d replicas after Kafka's plan over the others", f, n)
	}
	ends, err := adm.ListEndOffsets(t.Context(), "kt")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, ps := range ends {
		for _, o := range ps {
			total += o.Offset
		}
	}
	if total != 300 {
		t.Errorf("kt ends at %d records after the moves, want 300", total)
	}
}

// proposedPlan is the JSON line after "Proposed partition reassignment
// configuration" in --generate's output (Kafka's or samsa's).
func proposedPlan(t *testing.T, out string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, "Proposed partition reassignment configuration\n")
	if !ok {
		t.Fatalf("no proposed plan in:\n%s", out)
	}
	line, _, _ := strings.Cut(after, "\n")
	return line
}
