package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/freeport"
)

func TestRoundOrder(t *testing.T) {
	bs := []string{"a", "b", "c"}
	for r, want := range map[int][]string{
		1: {"a", "b", "c"}, 2: {"b", "c", "a"}, 3: {"c", "a", "b"}, 4: {"a", "b", "c"}, 5: {"b", "c", "a"},
	} {
		if got := roundOrder(bs, r); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", r, got, want)
		}
	}
	if !slices.Equal(bs, []string{"a", "b", "c"}) {
		t.Errorf("roundOrder changed its argument: %v", bs)
	}
}

// TestKafkaProperties: the single node is a standalone quorum of one with
// the replication factors of one node; a cluster's node names its own ID
// and the static voters, with RF 3 and min ISR 2 for every topic.
func TestKafkaProperties(t *testing.T) {
	b := &broker{dir: "/d", port: 9092, ctrlPort: 9093}
	single := kafkaKind{}.serverProperties(b)
	q := &kafkaQuorum{kind: "kafka-3", nodes: 3, voters: "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293"}
	node := kafkaKind{quorum: q, nodeID: 2}.serverProperties(b)
	for _, c := range []struct {
		props      string
		want, lack []string
	}{
		{single, []string{"node.id=1\n", "controller.quorum.bootstrap.servers=127.0.0.1:9093\n", "offsets.topic.replication.factor=1\n"},
			[]string{"controller.quorum.voters", "min.insync.replicas"}},
		{node, []string{"node.id=2\n", "controller.quorum.voters=" + q.voters + "\n", "default.replication.factor=3\n",
			"min.insync.replicas=2\n", "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n"},
			[]string{"controller.quorum.bootstrap.servers", "replication.factor=1", "min.isr=1"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.props, w) {
				t.Errorf("lacks %q:\n%s", w, c.props)
			}
		}
		for _, l := range c.lack {
			if strings.Contains(c.props, l) {
				t.Errorf("has %q:\n%s", l, c.props)
			}
		}
	}
	if n := (kafkaKind{quorum: q}).name(); n != "kafka-3" {
		t.Errorf("a cluster node's kind is %q", n)
	}
}

// TestClusterWorkloads: the cluster mode measures produce to 8 partitions
// and e2e, every topic with the kind's replication factor, and names the
// workloads as the main phase does.
func TestClusterWorkloads(t *testing.T) {
	d := &driver{o: options{records: 1000, e2eRecords: 100, e2eRate: 20000, produceLinger: 5 * time.Millisecond}}
	var names []string
	for _, w := range d.clusterWorkloads(3) {
		if w.replication != 3 {
			t.Errorf("%s: RF %d", w.name(), w.replication)
		}
		if w.waitReplicated != (w.kind == "produce") {
			t.Errorf("%s: wait replicated %v", w.name(), w.waitReplicated)
		}
		names = append(names, w.name())
	}
	want := []string{"produce 1KiB p8 acks=all", "produce 1KiB p8 acks=1", "produce 100B p8 acks=all", "produce 100B p8 acks=1",
		"e2e 100B p1 linger=0ms 20000/s", "e2e 100B p1 linger=5ms 20000/s"}
	if !slices.Equal(names, want) {
		t.Errorf("workloads %q, want %q", names, want)
	}
	if o := samsaClusterOverrides(3); o["default.replication.factor"] != "3" || o["min.insync.replicas"] != "2" ||
		o["broker.session.timeout.ms"] != "9000" {
		t.Errorf("samsa-3 overrides %v", o)
	}
}

func TestJoinInts(t *testing.T) {
	if got := joinInts([]int{12, 3, 456}); got != "12,3,456" {
		t.Errorf("joinInts = %q", got)
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := freePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: want 6 distinct", ports)
		}
		seen[p] = true
	}
}

// shKind runs a shell script as a broker, for the cluster's start-up paths.
type shKind struct{ script string }

func (shKind) name() string                { return "sh" }
func (shKind) full() bool                  { return true }
func (shKind) prepare(*broker) error       { return nil }
func (shKind) tls() *tlsFiles              { return nil }
func (k shKind) command(*broker) *exec.Cmd { return exec.Command("sh", "-c", k.script) }

// TestKafkaWaitReadyNodeExits: a node that exits fails the wait at once,
// marked errPortTaken when its log says it could not bind (start then
// tries new ports), and not otherwise.
func TestKafkaWaitReadyNodeExits(t *testing.T) {
	for _, c := range []struct {
		script string
		taken  bool
	}{
		{"echo 'java.net.BindException: Address already in use'; exit 1", true},
		{"echo 'something else'; exit 1", false},
	} {
		port, err := freeport.One()
		if err != nil {
			t.Fatal(err)
		}
		b := &broker{kind: shKind{c.script}, dir: t.TempDir(), port: port}
		r := &kafkaRunning{kind: "kafka-3", nodes: []*broker{b}, started: time.Now()}
		if err := b.start(); err != nil {
			t.Fatal(err)
		}
		<-b.exited
		err = r.waitReady(time.Minute)
		if !errors.Is(err, errExited) || errors.Is(err, errPortTaken) != c.taken {
			t.Errorf("%q: %v", c.script, err)
		}
	}
}
