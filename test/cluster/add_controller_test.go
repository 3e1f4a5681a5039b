package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestAddAndRemoveController runs KIP-853's growing and shrinking as an
// operator does, with processes: three combined nodes find their quorum
// through bootstrap servers; a fourth process, a controller formatted with
// --no-initial-controllers, starts and waits; samsa cluster add-controller
// makes it a voter (the status shows it so), a topic is created, and
// remove-controller takes it out again, leaving it outside the quorum.
func TestAddAndRemoveController(t *testing.T) {
	c := startClusterWith(t, devcluster.Config{Nodes: 3, BootstrapServers: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port, logs := joiningController(t, ctx, c, 4)
	if out, err := samsaOn(ctx, c, "cluster", "add-controller", "--controller-id", "4", "--controller-endpoint", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("add-controller: %v\n%s\nnode 4:\n%s", err, out, logs.String())
	}
	if r := quorumRole(t, ctx, c, 4); r != "voter" {
		t.Fatalf("node 4 after add-controller: quorum role %q, want voter", r)
	}
	createTopic(t, c, "after-add", 1, 3, 2)
	if out, err := samsaOn(ctx, c, "cluster", "remove-controller", "--controller-id", "4"); err != nil {
		t.Fatalf("remove-controller: %v\n%s", err, out)
	}
	if r := quorumRole(t, ctx, c, 4); r != "" {
		t.Fatalf("node 4 after remove-controller: quorum role %q, want none", r)
	}
	createTopic(t, c, "after-remove", 1, 3, 2)
}

// TestReplaceFailedController replaces a dead voter without downtime, as
// KIP-853 means it: of three combined nodes, node 3 is killed for good;
// remove-controller takes it out of the quorum while the other two keep
// serving, a new controller-only node 4 is added in its place, and a topic
// is created. Then node 1 is killed too: the quorum, now nodes 1, 2 and 4,
// still has a majority, so topics are still created, which the dead node 3
// in place of 4 would not have allowed.
func TestReplaceFailedController(t *testing.T) {
	c := startClusterWith(t, devcluster.Config{Nodes: 3, BootstrapServers: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Node(3).Kill(); err != nil {
		t.Fatal(err)
	}
	if out, err := samsaOn(ctx, c, "cluster", "remove-controller", "--controller-id", "3"); err != nil {
		t.Fatalf("remove-controller of the dead node: %v\n%s", err, out)
	}
	// A removed combined node becomes an observer (its broker would need
	// the log), and the leader remembers the dead one as such.
	if r := quorumRole(t, ctx, c, 3); r == "voter" || r == "leader" {
		t.Fatalf("node 3 after remove-controller: quorum role %q, want none or observer", r)
	}
	port, logs := joiningController(t, ctx, c, 4)
	if out, err := samsaOn(ctx, c, "cluster", "add-controller", "--controller-id", "4", "--controller-endpoint", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("add-controller: %v\n%s\nnode 4:\n%s", err, out, logs.String())
	}
	if r := quorumRole(t, ctx, c, 4); r != "voter" {
		t.Fatalf("node 4 after add-controller: quorum role %q, want voter", r)
	}
	createTopic(t, c, "after-replace", 1, 2, 1)

	if err := c.Node(1).Kill(); err != nil {
		t.Fatal(err)
	}
	adm := adminClient(t, c)
	deadline := time.Now().Add(30 * time.Second)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := adm.CreateTopic(rctx, 1, 1, nil, "with-two-of-three")
		rcancel()
		if err == nil && resp.Err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no topic created with voters 2 and 4 of 1, 2, 4: %v %v\nnode 4:\n%s", err, resp.Err, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// joiningController formats and starts a controller-only node id that
// finds c's quorum through its controllers' listeners and stays outside it
// until added (storage format --no-initial-controllers). It returns the
// node's controller port and its output; the process ends with the test.
func joiningController(t *testing.T, ctx context.Context, c *devcluster.Cluster, id int32) (int, *strings.Builder) {
	t.Helper()
	var boot []string
	for _, n := range c.Nodes() {
		boot = append(boot, "127.0.0.1:"+strconv.Itoa(n.ControllerPort))
	}
	port := freeLoopbackPort(t)
	dir := t.TempDir()
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte("process.roles=controller\nnode.id="+strconv.Itoa(int(id))+"\nlisteners=CONTROLLER://127.0.0.1:"+strconv.Itoa(port)+"\n"+
		"controller.listener.names=CONTROLLER\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT\n"+
		"controller.quorum.bootstrap.servers="+strings.Join(boot, ",")+"\ncontroller.quorum.election.timeout.ms=1000\n"+
		"log.dirs="+filepath.Join(dir, "data")+"\nsamsa.http.listener=\nsamsa.schema.registry.listener=\nsamsa.rest.listener=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binary, "storage", "format", "-c", props, "-t", c.ClusterID(), "--no-initial-controllers").CombinedOutput(); err != nil {
		t.Fatalf("format: %v\n%s", err, out)
	}
	logs := &strings.Builder{}
	serve := exec.CommandContext(ctx, binary, "serve", "--config", props)
	serve.Stdout, serve.Stderr = logs, logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	return port, logs
}

// samsaOn runs the samsa CLI against c's running brokers.
func samsaOn(ctx context.Context, c *devcluster.Cluster, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, binary, append(args, "--bootstrap-server", strings.Join(runningAddrs(c), ","))...).CombinedOutput()
	return string(out), err
}

// quorumRole is node id's quorum role as samsa cluster status says it:
// leader, voter, observer, or "" for none.
func quorumRole(t *testing.T, ctx context.Context, c *devcluster.Cluster, id int32) string {
	t.Helper()
	out, err := samsaOn(ctx, c, "cluster", "status", "--json")
	if err != nil {
		t.Fatalf("cluster status: %v\n%s", err, out)
	}
	var st struct {
		Nodes []struct {
			NodeID     int32  `json:"node_id"`
			QuorumRole string `json:"quorum_role"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("cluster status: %v\n%s", err, out)
	}
	for _, n := range st.Nodes {
		if n.NodeID == id {
			return n.QuorumRole
		}
	}
	return ""
}
