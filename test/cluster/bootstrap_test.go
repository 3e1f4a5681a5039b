package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBootstrapServersQuorum runs Kafka 4's usual layout with no node
// naming controller.quorum.voters: three controllers formatted with
// --initial-controllers and two broker-only nodes, all finding the quorum
// through controller.quorum.bootstrap.servers. A replicated topic takes
// acks=all writes and reads them back; the active controller is killed
// with SIGKILL and topic creation works again, through the brokers, which
// learn the new active controller from the Raft configuration.
func TestBootstrapServersQuorum(t *testing.T) {
	c := startClusterWith(t, devcluster.Config{Nodes: 5, Roles: isolatedRoles, BootstrapServers: true})
	for _, n := range c.Nodes() {
		props, err := os.ReadFile(n.ConfigPath())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(props), "controller.quorum.voters") || !strings.Contains(string(props), "controller.quorum.bootstrap.servers=") {
			t.Fatalf("node %d's server.properties is not a bootstrap-servers quorum's:\n%s", n.ID, props)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ps, err := brokersListed(ctx, c.Node(4).Addr())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ps, []int32{4, 5}) {
		t.Fatalf("Metadata lists brokers %v, want the broker-only nodes 4, 5", ps)
	}
	createTopic(t, c, "bootstrapped", 2, 2, 2)
	for p := range int32(2) {
		produceTo(t, c.Addrs(), "bootstrapped", p, fmt.Sprintf("first-%d", p), kgo.AllISRAcks())
	}
	for p := range int32(2) {
		if !readBack(ctx, c.Addrs(), "bootstrapped", p, fmt.Sprintf("first-%d", p)) {
			t.Fatalf("bootstrapped-%d: first-%d was not read back", p, p)
		}
	}

	leader := killActiveController(ctx, t, c)
	next, err := quorumLeader(ctx, c.Node(5).Addr())
	if err != nil || next == leader || next < 1 || next > 3 {
		t.Fatalf("after the kill the quorum's leader is node %d (%v), want another controller", next, err)
	}
	for p := range int32(2) {
		produceTo(t, c.Addrs(), "bootstrapped", p, fmt.Sprintf("second-%d", p), kgo.AllISRAcks())
		if !readBack(ctx, c.Addrs(), "bootstrapped", p, fmt.Sprintf("second-%d", p)) {
			t.Errorf("bootstrapped-%d: second-%d was not read back", p, p)
		}
	}
}

// TestBootstrapServersCombined: three combined nodes, each formatted with
// --initial-controllers and naming all three as bootstrap servers, form
// one quorum over their controller listeners (not three single nodes);
// after a SIGKILL of the active controller a topic is created again.
func TestBootstrapServersCombined(t *testing.T) {
	c := startClusterWith(t, devcluster.Config{Nodes: 3, BootstrapServers: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ps, err := brokersListed(ctx, c.Node(1).Addr())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ps, []int32{1, 2, 3}) {
		t.Fatalf("Metadata lists brokers %v, want 1, 2, 3", ps)
	}
	createTopic(t, c, "combined", 1, 3, 2)
	produceTo(t, c.Addrs(), "combined", 0, "first", kgo.AllISRAcks())
	leader, err := quorumLeader(ctx, c.Node(1).Addr())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := c.Node(leader).Kill(); err != nil {
		t.Fatal(err)
	}
	took := createUntil(t, c, "after-controller-kill", t0, 60*time.Second)
	t.Logf("killed the active controller (node %d): a topic was created %v later", leader, took.Round(time.Millisecond))
	if !readBack(ctx, runningAddrs(c), "combined", 0, "first") {
		t.Fatal("combined-0: first was not read back")
	}
}

// TestBootstrapServersRefused runs the two nodes a bootstrap-servers
// quorum cannot take, as real processes: a broker whose bootstrap
// servers lead nowhere logs what it waits for while it retries and gives
// up after initial.broker.registration.timeout.ms, naming them; a
// combined node formatted with --no-initial-controllers refuses to start,
// since only a controller-only node joins the quorum through AddRaftVoter.
func TestBootstrapServersRefused(t *testing.T) {
	dead := freeLoopbackPort(t)
	id, err := exec.Command(binary, "storage", "random-uuid").Output()
	if err != nil {
		t.Fatal(err)
	}
	clusterID := strings.TrimSpace(string(id))
	for _, c := range []struct {
		name, props string
		format      []string
		want        []string
	}{
		{"broker whose bootstrap servers lead nowhere",
			"process.roles=broker\nnode.id=4\nlisteners=PLAINTEXT://127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t)) + "\n" +
				"controller.listener.names=CONTROLLER\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n" +
				"controller.quorum.bootstrap.servers=127.0.0.1:" + strconv.Itoa(dead) + "\ninitial.broker.registration.timeout.ms=7000\n",
			nil,
			[]string{`msg="waiting for the active controller"`, `asking="controller.quorum.bootstrap.servers 127.0.0.1:` + strconv.Itoa(dead) + `"`,
				"no active controller answered (asked controller.quorum.bootstrap.servers 127.0.0.1:" + strconv.Itoa(dead)}},
		{"combined node formatted with --no-initial-controllers",
			"process.roles=broker,controller\nnode.id=1\nlisteners=PLAINTEXT://127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t)) +
				",CONTROLLER://127.0.0.1:" + strconv.Itoa(freeLoopbackPort(t)) + "\n" +
				"controller.listener.names=CONTROLLER\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n" +
				"controller.quorum.bootstrap.servers=127.0.0.1:" + strconv.Itoa(dead) + "\n",
			[]string{"--no-initial-controllers"},
			[]string{"joins the quorum through AddRaftVoter, which Samsa supports for a controller-only node"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			props := filepath.Join(dir, "server.properties")
			if err := os.WriteFile(props, []byte(c.props+"log.dirs="+filepath.Join(dir, "data")+"\nsamsa.http.listener=\nsamsa.schema.registry.listener=\nsamsa.rest.listener=\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(binary, append([]string{"storage", "format", "-c", props, "-t", clusterID}, c.format...)...).CombinedOutput(); err != nil {
				t.Fatalf("format: %v\n%s", err, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			out, err := exec.CommandContext(ctx, binary, "serve", "--config", props).CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("samsa serve still runs after %v:\n%s", time.Since(start), out)
			}
			if err == nil {
				t.Fatalf("samsa serve exited 0:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the output does not say %q:\n%s", w, out)
				}
			}
			t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// freeLoopbackPort is a loopback port nothing listens on, for a moment.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
