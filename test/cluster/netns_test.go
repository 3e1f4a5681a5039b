package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// netnsNet is a network of Linux network namespaces made by a test: one
// namespace per node, each with a veth pair into one bridge in this
// process's namespace, so the test's clients reach every node and the
// nodes reach each other at addresses of their own. Partition cuts two
// nodes apart with blackhole routes in both namespaces (the machines have
// no iptables, nor tc's filters; a route lookup is made per packet, so
// established connections are cut too), and Heal undoes it. A real network
// rather than a proxy between the brokers: the brokers and the quorum
// dial the addresses they are configured with, each connection passes the
// kernel's TCP, and a cut looks to them as it would between machines.
type netnsNet struct {
	t      *testing.T
	prefix string // names: <prefix>-<i> namespaces, br<prefix> bridge, v<prefix><i> veths
	subnet string // "10.200.N"
	nodes  int
	cuts   map[[2]int]bool
}

// newNetns makes n namespaces, or skips the test where this process may
// not (not root, no ip command): CI runs as root and always has them.
func newNetns(t *testing.T, n int) *netnsNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespaces need the ip command (iproute2)")
	}
	id := os.Getpid() % 10000
	nn := &netnsNet{t: t, prefix: fmt.Sprintf("sm%d", id), subnet: fmt.Sprintf("10.201.%d", id%250), nodes: n, cuts: map[[2]int]bool{}}
	t.Cleanup(nn.remove)
	nn.run("link", "add", nn.bridge(), "type", "bridge")
	nn.run("addr", "add", nn.subnet+".254/24", "dev", nn.bridge())
	nn.run("link", "set", nn.bridge(), "up")
	for i := 1; i <= n; i++ {
		ns, veth := nn.Namespace(i), fmt.Sprintf("v%s%d", nn.prefix, i)
		nn.run("netns", "add", ns)
		nn.run("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
		nn.run("link", "set", veth, "master", nn.bridge(), "up")
		nn.run("-n", ns, "addr", "add", nn.Host(i)+"/24", "dev", "eth0")
		nn.run("-n", ns, "link", "set", "eth0", "up")
		nn.run("-n", ns, "link", "set", "lo", "up")
	}
	return nn
}

func (nn *netnsNet) bridge() string { return "br" + nn.prefix }

// Namespace is node i's namespace (from 1).
func (nn *netnsNet) Namespace(i int) string { return fmt.Sprintf("%s-%d", nn.prefix, i) }

// Host is node i's address.
func (nn *netnsNet) Host(i int) string { return fmt.Sprintf("%s.%d", nn.subnet, i) }

// Hosts lists every node's address, for devcluster.Config.Hosts.
func (nn *netnsNet) Hosts() []string {
	var out []string
	for i := 1; i <= nn.nodes; i++ {
		out = append(out, nn.Host(i))
	}
	return out
}

// Prefix runs a node in its namespace, for devcluster.Config.Prefix.
func (nn *netnsNet) Prefix(id int32) []string {
	return []string{"ip", "netns", "exec", nn.Namespace(int(id))}
}

// Partition cuts nodes a and b apart, both ways.
func (nn *netnsNet) Partition(a, b int) {
	nn.run("-n", nn.Namespace(a), "route", "add", "blackhole", nn.Host(b)+"/32")
	nn.run("-n", nn.Namespace(b), "route", "add", "blackhole", nn.Host(a)+"/32")
	nn.cuts[[2]int{a, b}] = true
}

// Heal undoes every Partition.
func (nn *netnsNet) Heal() {
	for cut := range nn.cuts {
		nn.run("-n", nn.Namespace(cut[0]), "route", "del", "blackhole", nn.Host(cut[1])+"/32")
		nn.run("-n", nn.Namespace(cut[1]), "route", "del", "blackhole", nn.Host(cut[0])+"/32")
		delete(nn.cuts, cut)
	}
}

func (nn *netnsNet) run(args ...string) {
	nn.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		nn.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// remove deletes the namespaces (their veths go with them) and the
// bridge; it runs after the cluster's processes are gone (cleanups run
// last-registered first, and the cluster is started after this).
func (nn *netnsNet) remove() {
	for i := 1; i <= nn.nodes; i++ {
		exec.Command("ip", "netns", "del", nn.Namespace(i)).Run()
	}
	exec.Command("ip", "link", "del", nn.bridge()).Run()
}
