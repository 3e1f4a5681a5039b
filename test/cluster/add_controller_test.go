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
	var boot []string
	for _, n := range c.Nodes() {
		boot = append(boot, "127.0.0.1:"+strconv.Itoa(n.ControllerPort))
	}
	port := freeLoopbackPort(t)
	dir := t.TempDir()
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte("process.roles=controller\nnode.id=4\nlisteners=CONTROLLER://127.0.0.1:"+strconv.Itoa(port)+"\n"+
		"controller.listener.names=CONTROLLER\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT\n"+
		"controller.quorum.bootstrap.servers="+strings.Join(boot, ",")+"\ncontroller.quorum.election.timeout.ms=1000\n"+
		"log.dirs="+filepath.Join(dir, "data")+"\nsamsa.http.listener=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binary, "storage", "format", "-c", props, "-t", c.ClusterID(), "--no-initial-controllers").CombinedOutput(); err != nil {
		t.Fatalf("format: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var logs strings.Builder
	serve := exec.CommandContext(ctx, binary, "serve", "--config", props)
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })

	samsa := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, binary, append(args, "--bootstrap-server", c.Bootstrap())...).CombinedOutput()
		return string(out), err
	}
	role := func(id int32) string {
		out, err := samsa("cluster", "status", "--json")
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

	if out, err := samsa("cluster", "add-controller", "--controller-id", "4", "--controller-endpoint", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("add-controller: %v\n%s\nnode 4:\n%s", err, out, logs.String())
	}
	if r := role(4); r != "voter" {
		t.Fatalf("node 4 after add-controller: quorum role %q, want voter", r)
	}
	createTopic(t, c, "after-add", 1, 3, 2)
	if out, err := samsa("cluster", "remove-controller", "--controller-id", "4"); err != nil {
		t.Fatalf("remove-controller: %v\n%s", err, out)
	}
	if r := role(4); r != "" {
		t.Fatalf("node 4 after remove-controller: quorum role %q, want none", r)
	}
	createTopic(t, c, "after-remove", 1, 3, 2)
}
