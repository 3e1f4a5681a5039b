package devcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// binary is the samsa binary TestMain builds for the tests that run
// processes.
var binary string

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var err error
	binary, err = BuildOnce(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	RemoveBuilt()
	os.Exit(code)
}

func TestReplicationDefaults(t *testing.T) {
	for _, c := range []struct {
		nodes      int
		rf, minISR string
	}{
		{1, "1", "1"},
		{2, "2", "2"},
		{3, "3", "2"},
		{5, "3", "2"},
	} {
		got := ReplicationDefaults(c.nodes)
		want := map[string]string{
			"default.replication.factor": c.rf, "min.insync.replicas": c.minISR,
			"offsets.topic.replication.factor": c.rf, "transaction.state.log.replication.factor": c.rf,
			"transaction.state.log.min.isr":                    c.minISR,
			"share.coordinator.state.topic.replication.factor": c.rf, "share.coordinator.state.topic.min.isr": c.minISR,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%d nodes (-want +got):\n%s", c.nodes, diff)
		}
	}
}

// TestNodeConfig pins node 2's server.properties in a 3-node cluster,
// with an override winning over a default.
func TestNodeConfig(t *testing.T) {
	var nodes []*Node
	for i := range int32(3) {
		nodes = append(nodes, &Node{ID: i + 1, Host: "127.0.0.1", KafkaPort: 19092 + int(i), ControllerPort: 19192 + int(i), HTTPPort: 19292 + int(i),
			RegistryPort: 19392 + int(i), RestPort: 19492 + int(i), Roles: "broker,controller", Dir: fmt.Sprintf("/d/node-%d", i+1)})
	}
	n := nodes[1]
	got := string(formatProperties("node 2", nodeConfig(n, map[string]string{"controller.quorum.voters": voters(nodes)}, 3, map[string]string{"broker.session.timeout.ms": "6000"})))
	want := `# node 2
broker.heartbeat.interval.ms=200
broker.session.timeout.ms=6000
controller.listener.names=CONTROLLER
controller.quorum.election.timeout.ms=500
controller.quorum.voters=1@127.0.0.1:19192,2@127.0.0.1:19193,3@127.0.0.1:19194
default.replication.factor=3
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
listeners=PLAINTEXT://127.0.0.1:19093,CONTROLLER://127.0.0.1:19193
log.dirs=/d/node-2/data
min.insync.replicas=2
node.id=2
offsets.topic.replication.factor=3
process.roles=broker,controller
samsa.console.listener=
samsa.http.listener=127.0.0.1:19293
samsa.rest.listener=127.0.0.1:19493
samsa.schema.registry.listener=127.0.0.1:19393
share.coordinator.state.topic.min.isr=2
share.coordinator.state.topic.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.replication.factor=3
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Hosts of their own (network namespaces): each node on its address.
	c, err := New(Config{Binary: binary, Dir: t.TempDir(), Nodes: 2, BasePort: 9092, Hosts: []string{"10.9.0.1", "10.9.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Bootstrap(), "10.9.0.1:9092,10.9.0.2:9092"; got != want {
		t.Errorf("bootstrap %q, want %q", got, want)
	}
	cfg, err := readProperties(c.Node(2).ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg["listeners"], "PLAINTEXT://10.9.0.2:9092,CONTROLLER://10.9.0.2:9192"; got != want {
		t.Errorf("listeners %q, want %q", got, want)
	}
	if got, want := cfg["controller.quorum.voters"], "1@10.9.0.1:9192,2@10.9.0.2:9192"; got != want {
		t.Errorf("voters %q, want %q", got, want)
	}
	if got, want := cfg["samsa.http.listener"], "10.9.0.2:9292"; got != want {
		t.Errorf("HTTP listener %q, want %q", got, want)
	}
	if got, want := cfg["samsa.schema.registry.listener"], "10.9.0.2:9392"; got != want {
		t.Errorf("registry listener %q, want %q", got, want)
	}
	if got, want := cfg["samsa.rest.listener"], "10.9.0.2:9492"; got != want {
		t.Errorf("REST listener %q, want %q", got, want)
	}
}

// TestNodeConfigSecuredListeners: overrides that leave a node no
// PLAINTEXT listener turn its registry off (it could not reach the
// broker), unless they set the registry listener themselves.
func TestNodeConfigSecuredListeners(t *testing.T) {
	n := &Node{ID: 1, Host: "127.0.0.1", KafkaPort: 19092, ControllerPort: 19192, HTTPPort: 19292, RegistryPort: 19392, RestPort: 19492,
		Roles: "broker,controller", Dir: "/d/node-1"}
	secured := map[string]string{"listener.security.protocol.map": "PLAINTEXT:SASL_SSL,CONTROLLER:SASL_SSL"}
	if got := nodeConfig(n, nil, 1, secured)["samsa.schema.registry.listener"]; got != "" {
		t.Errorf("registry listener %q with every listener secured", got)
	}
	if got := nodeConfig(n, nil, 1, secured)["samsa.rest.listener"]; got != "" {
		t.Errorf("REST listener %q with every listener secured", got)
	}
	if got := nodeConfig(n, nil, 1, nil)["samsa.rest.listener"]; got != "127.0.0.1:19492" {
		t.Errorf("REST listener %q by default", got)
	}
	if _, ok := nodeConfig(n, nil, 1, nil)["samsa.connect.listener"]; ok {
		t.Error("a node of a cluster without Connect sets samsa.connect.listener")
	}
	n.ConnectPort = 19592
	if got := nodeConfig(n, nil, 1, nil)["samsa.connect.listener"]; got != "127.0.0.1:19592" {
		t.Errorf("Connect listener %q with Connect on", got)
	}
	if got, ok := nodeConfig(n, nil, 1, secured)["samsa.connect.listener"]; ok {
		t.Errorf("Connect listener %q with every listener secured", got)
	}
	n.ConnectPort = 0
	if got := nodeConfig(n, nil, 1, nil)["samsa.schema.registry.listener"]; got != "127.0.0.1:19392" {
		t.Errorf("registry listener %q by default", got)
	}
	secured["samsa.schema.registry.listener"] = "127.0.0.1:1"
	if got := nodeConfig(n, nil, 1, secured)["samsa.schema.registry.listener"]; got != "127.0.0.1:1" {
		t.Errorf("registry listener %q when the overrides set it", got)
	}
}

// TestPortsFromNamesTheBusyPort: a taken port fails the layout before
// anything starts, naming the port and whose it would have been.
func TestPortsFromNamesTheBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().(*net.TCPAddr).Port
	// The busy port is node 2's controller port when counting from
	// busy-101; the ports below it may be taken by others too, so only a
	// failure naming another port is tolerated.
	base := busy - ControllerPortOffset - 1
	_, err = portsFrom(base, 3, false)
	if !errors.Is(err, ErrPortInUse) {
		t.Fatalf("portsFrom(%d, 3) = %v, want ErrPortInUse", base, err)
	}
	if want := fmt.Sprintf("127.0.0.1:%d (node 2's controller listener)", busy); !strings.Contains(err.Error(), want) && strings.Contains(err.Error(), fmt.Sprint(busy)) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if _, err := portsFrom(65400, 3, false); err == nil || !strings.Contains(err.Error(), "65535") {
		t.Errorf("ports past 65535: %v", err)
	}
	// Connect's ports are the highest: a base that fits without them
	// does not with them.
	if _, err := portsFrom(65100, 3, true); err == nil || !strings.Contains(err.Error(), "65535") {
		t.Errorf("Connect ports past 65535: %v", err)
	}
}

func newCluster(t *testing.T, dir string, nodes int) *Cluster {
	t.Helper()
	c, err := New(Config{Binary: binary, Dir: dir, Nodes: nodes, StopTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, c *Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("%v\n%s", err, c.LogTails(20))
	}
}

func waitReady(t *testing.T, c *Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, c.LogTails(20))
	}
}

// TestClusterLifecycle runs three processes through what the dev command
// and the tests do: start, a topic replicated by the defaults, a clean
// stop and a restart of one node, a crash of another, then the whole
// cluster started again from its kept directory.
func TestClusterLifecycle(t *testing.T) {
	dir := t.TempDir()
	c := newCluster(t, dir, 3)
	defer c.Close()
	start(t, c)
	if got := len(strings.Split(c.Bootstrap(), ",")); got != 3 {
		t.Fatalf("bootstrap %q", c.Bootstrap())
	}
	// The registries first: they start once their nodes serve, and their
	// store topic and group (__consumer_offsets) are a burst of metadata
	// that a node's /readyz may be behind on for a moment.
	assertRegistries(t, c)
	assertRestProxies(t, c)
	waitReady(t, c)
	// Every node serves /metrics and /readyz on a port of its own.
	seen := map[string]bool{}
	for _, n := range c.Nodes() {
		if n.HTTPAddr() == "" || seen[n.HTTPAddr()] {
			t.Fatalf("node %d's HTTP listener %q (others: %v)", n.ID, n.HTTPAddr(), seen)
		}
		seen[n.HTTPAddr()] = true
		for path, want := range map[string]string{"/metrics": "samsa_", "/readyz": "ready"} {
			// A node may be behind the metadata log for a moment (the
			// registries' topics and group were created just now): ready
			// within 10s is what is asked.
			deadline := time.Now().Add(10 * time.Second)
			for {
				code, body := httpGet(t, n.HTTPAddr(), path)
				if code == 200 && strings.Contains(body, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("node %d GET %s: %d %.200q", n.ID, path, code, body)
					break
				}
				time.Sleep(100 * time.Millisecond) // /readyz has no event to wait on
			}
		}
	}
	assertTopicRF(t, c.Bootstrap(), "rf-default", 3)

	if err := c.Node(2).Stop(20 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, c.Node(2).LogTail(20))
	}
	waitReady(t, c) // nodes 1 and 3 list only each other
	if err := c.Node(2).Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c)
	if err := c.Node(3).Kill(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c) // node 3 fenced after its session
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, c.LogTails(20))
	}

	again := newCluster(t, dir, 3)
	defer again.Close()
	if again.ClusterID() != c.ClusterID() || again.Bootstrap() != c.Bootstrap() {
		t.Fatalf("a kept directory started cluster %s on %s, want %s on %s", again.ClusterID(), again.Bootstrap(), c.ClusterID(), c.Bootstrap())
	}
	start(t, again)
	assertTopicRF(t, again.Bootstrap(), "rf-default-2", 3)
}

// assertRegistries checks that every node runs a Schema Registry on a
// port of its own, and that they share one store: a schema registered
// through node 1 (forwarded to the elected primary if need be) is read
// back through every node.
func assertRegistries(t *testing.T, c *Cluster) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range c.Nodes() {
		if n.RegistryAddr() == "" || seen[n.RegistryAddr()] || n.RegistryAddr() == n.HTTPAddr() {
			t.Fatalf("node %d's registry listener %q (others: %v)", n.ID, n.RegistryAddr(), seen)
		}
		seen[n.RegistryAddr()] = true
	}
	cl := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	body := `{"schema":"\"string\""}`
	for {
		// The registries start in the background once their node serves:
		// 503 until they have read the store.
		resp, err := cl.Post("http://"+c.Node(1).RegistryAddr()+"/subjects/devcluster-value/versions", "application/json", strings.NewReader(body))
		if err == nil {
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.TrimSpace(string(got)) == `{"id":1}` {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("register through node 1: %d %s\n%s", resp.StatusCode, got, c.LogTails(20))
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("register through node 1: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // polling a service that has no start event to wait on
	}
	for _, n := range c.Nodes() {
		for {
			code, got := httpGet(t, n.RegistryAddr(), "/subjects")
			if code == 200 && strings.TrimSpace(got) == `["devcluster-value"]` {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d GET /subjects: %d %s", n.ID, code, got)
			}
			time.Sleep(100 * time.Millisecond) // a secondary reads the store a moment after the write
		}
	}
}

// assertRestProxies checks that every broker node runs a REST Proxy on a
// port of its own, each answering for the one cluster.
func assertRestProxies(t *testing.T, c *Cluster) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range c.Nodes() {
		addr := n.RestAddr()
		if addr == "" || seen[addr] || addr == n.HTTPAddr() || addr == n.RegistryAddr() {
			t.Fatalf("node %d's REST listener %q (others: %v)", n.ID, addr, seen)
		}
		seen[addr] = true
		code, got := httpGet(t, addr, "/v3/clusters")
		if code != 200 || !strings.Contains(got, `"cluster_id":"`+c.ClusterID()+`"`) {
			t.Fatalf("node %d GET /v3/clusters: %d %s", n.ID, code, got)
		}
	}
}

// assertTopicRF creates a topic without a replication factor and checks
// it got want replicas: the cluster's default.replication.factor.
func assertTopicRF(t *testing.T, bootstrap, topic string, want int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 2, -1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td[topic].Partitions {
		if len(p.Replicas) != want {
			t.Errorf("%s-%d has replicas %v, want %d", topic, p.Partition, p.Replicas, want)
		}
	}
}

// TestStartReportsAPortInUse: a node that cannot bind its port ends the
// start at once with ErrPortInUse, which a caller on free ports answers by
// trying other ports.
func TestStartReportsAPortInUse(t *testing.T) {
	c := newCluster(t, t.TempDir(), 2)
	defer c.Close()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", c.Node(2).KafkaPort))
	if err != nil {
		t.Skipf("the port was taken by someone else: %v", err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.Start(ctx)
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), "node 2") {
		t.Fatalf("start with node 2's port taken: %v\n%s", err, c.LogTails(10))
	}
}

// httpGet fetches a path from a node's HTTP listener.
func httpGet(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s%s: %v", addr, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s%s: %v", addr, path, err)
	}
	return resp.StatusCode, string(body)
}

// TestKeptClusterWithoutHTTPPortsGetsThem: a directory recorded before
// the nodes had HTTP and registry listeners keeps its other ports and gets
// free ones for them, recorded for the next run.
func TestKeptClusterWithoutHTTPPortsGetsThem(t *testing.T) {
	dir := t.TempDir()
	c := newCluster(t, dir, 2)
	state := filepath.Join(dir, stateFile)
	rec, err := readProperties(state)
	if err != nil {
		t.Fatal(err)
	}
	delete(rec, "http.ports")
	delete(rec, "registry.ports")
	if err := os.WriteFile(state, formatProperties("an older run", rec), 0o644); err != nil {
		t.Fatal(err)
	}
	again := newCluster(t, dir, 2)
	for i, n := range again.Nodes() {
		if n.KafkaPort != c.Nodes()[i].KafkaPort || n.HTTPPort == 0 || n.HTTPPort == n.KafkaPort ||
			n.RegistryPort == 0 || n.RegistryPort == n.HTTPPort || n.RegistryPort == n.KafkaPort {
			t.Errorf("node %d: Kafka %d (was %d), HTTP %d, registry %d", n.ID, n.KafkaPort, c.Nodes()[i].KafkaPort, n.HTTPPort, n.RegistryPort)
		}
	}
	if rec, err = readProperties(state); err != nil || rec["http.ports"] == "" || rec["registry.ports"] == "" {
		t.Errorf("http.ports or registry.ports not recorded: %v %v", rec, err)
	}
}
