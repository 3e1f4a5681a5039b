package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestClusterRemoveAndAddController runs three samsa processes that find
// their quorum through bootstrap servers: remove-controller takes a voter
// that is not the active controller out (it stays an observer, being a
// broker too), add-controller makes it a voter again, and each refusal
// comes back in Kafka's words.
func TestClusterRemoveAndAddController(t *testing.T) {
	dc, err := devcluster.New(devcluster.Config{Binary: samsaBinary(t), Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second, Overrides: noRegistry(), BootstrapServers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dc.Start(ctx); err != nil {
		t.Fatalf("start: %v\n%s", err, dc.LogTails(20))
	}
	c := &testCluster{t: t, addr: dc.Bootstrap()}
	roles := func() (int32, map[int32]string) {
		var st clusterStatus
		if err := json.Unmarshal([]byte(c.ok("", "cluster", "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		out := map[int32]string{}
		for _, n := range st.Nodes {
			out[n.NodeID] = n.QuorumRole
		}
		return st.Controller, out
	}
	var active int32
	waitUntil(t, 15*time.Second, "an active controller", func() bool { active, _ = roles(); return active > 0 })
	victim := int32(1)
	if active == 1 {
		victim = 2
	}
	endpoint := "127.0.0.1:" + strconv.Itoa(dc.Node(victim).ControllerPort)

	c.fails("duplicate voter: The voter id for ReplicaKey(id="+fmt.Sprint(victim), "cluster", "add-controller", "--controller-id", fmt.Sprint(victim), "--controller-endpoint", endpoint)
	c.fails("Cannot remove voter ReplicaKey(id=9", "cluster", "remove-controller", "--controller-id", "9")
	c.fails("--controller-endpoint", "cluster", "add-controller", "--controller-id", "4", "--controller-endpoint", "nowhere")

	c.ok("", "cluster", "remove-controller", "--controller-id", fmt.Sprint(victim))
	if _, r := roles(); r[victim] != "observer" {
		t.Fatalf("after remove-controller %d: roles %v, want it an observer", victim, r)
	}
	c.ok("", "cluster", "add-controller", "--controller-id", fmt.Sprint(victim), "--controller-endpoint", endpoint)
	if _, r := roles(); r[victim] != "voter" && r[victim] != "leader" {
		t.Fatalf("after add-controller %d: roles %v, want it a voter", victim, r)
	}
}
