package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/console"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/freeport"
)

// How the console is run (-console).
const (
	// consoleServe: the serve process's own console
	// (samsa.console.listener), as users get it.
	consoleServe = "serve"
	// consoleInproc: internal/console in this process, a client of the
	// broker like the serve's (for a binary without the listener).
	consoleInproc = "inproc"
	// consoleAuto: serve when the binary knows samsa.console.listener,
	// inproc otherwise.
	consoleAuto = "auto"
)

// cluster is the `samsa serve` nodes the benchmark measures.
type cluster struct {
	dc         *devcluster.Cluster
	addrs      []string // Kafka listeners
	metricsURL []string // each node's samsa.http.listener /metrics
	consoleURL string   // node 1's samsa.console.listener; "" when run in process
	admin      *kadm.Client
	cl         *kgo.Client
}

func (c *cluster) stop() {
	c.cl.Close()
	_ = c.dc.Close()
}

// pids are the nodes' process IDs.
func (c *cluster) pids() []int {
	var ps []int
	for _, n := range c.dc.Nodes() {
		ps = append(ps, n.Pid())
	}
	return ps
}

// hasConsoleListener says whether bin knows samsa.console.listener (its
// config catalog names it).
func hasConsoleListener(bin string) (bool, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return false, err
	}
	return bytes.Contains(data, []byte("samsa.console.listener")), nil
}

// startCluster runs nodes `samsa serve` of bin as one cluster in dir
// (a cluster kept there from an earlier run starts again with its data),
// each with /metrics on its own port (and a Connect worker with
// connect), node 1 with the console when withConsole; it waits until every broker answers Metadata and the
// console answers.
func startCluster(ctx context.Context, bin, dir string, nodes int, withConsole, connect bool) (*cluster, error) {
	overrides := map[string]string{
		"group.initial.rebalance.delay.ms": "0",
		// The topics have one replica each (see -nodes); devcluster's
		// default of 2 for three nodes would refuse their acks=all
		// produce.
		"min.insync.replicas": "1",
		// Kafka's timings, not devcluster's quick failure detection:
		// the nodes share two loaded cores, and nothing is killed here.
		"broker.heartbeat.interval.ms":          "2000",
		"broker.session.timeout.ms":             "9000",
		"controller.quorum.election.timeout.ms": "1000",
	}
	consolePort := 0
	if withConsole {
		// Off on every node (none binds the default port), then node 1's
		// line is set below.
		overrides["samsa.console.listener"] = ""
		ports, err := freeport.Pick(1)
		if err != nil {
			return nil, err
		}
		consolePort = ports[0]
	}
	var dc *devcluster.Cluster
	var err error
	for attempt := 1; ; attempt++ {
		dc, err = devcluster.New(devcluster.Config{Binary: bin, Dir: dir, Nodes: nodes, Overrides: overrides, Connect: connect})
		if err == nil && withConsole {
			err = setProperty(dc.Node(1).ConfigPath(), "samsa.console.listener", "127.0.0.1:"+strconv.Itoa(consolePort))
		}
		if err == nil {
			// A node reopening thousands of partitions takes a while.
			sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			err = dc.Start(sctx)
			cancel()
		}
		if err == nil {
			break
		}
		if dc != nil {
			tails := dc.LogTails(5)
			_ = dc.Close()
			err = fmt.Errorf("%w\n%s", err, tails)
		}
		if !errors.Is(err, devcluster.ErrPortInUse) || attempt == 3 {
			return nil, err
		}
	}
	c := &cluster{dc: dc, addrs: dc.Addrs()}
	for _, n := range dc.Nodes() {
		c.metricsURL = append(c.metricsURL, "http://"+n.HTTPAddr()+"/metrics")
	}
	if c.cl, err = kgo.NewClient(kgo.SeedBrokers(c.addrs...)); err != nil {
		_ = dc.Close()
		return nil, err
	}
	c.admin = kadm.NewClient(c.cl)
	if withConsole {
		c.consoleURL = "http://127.0.0.1:" + strconv.Itoa(consolePort)
		deadline := time.Now().Add(time.Minute)
		for {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := httpOK(cctx, c.consoleURL+"/static/console.css")
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				c.stop()
				return nil, fmt.Errorf("node 1's console does not answer: %w (log %s)", err, dc.Node(1).LogPath())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return c, nil
}

// setProperty sets key's line in a properties file.
func setProperty(path, key, value string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []string
	found := false
	for _, line := range strings.Split(string(data), "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == key {
			line, found = key+"="+value, true
		}
		out = append(out, line)
	}
	if !found {
		return fmt.Errorf("%s has no %s line", path, key)
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644)
}

func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// inprocConsole serves internal/console from this process as node 1's
// `samsa serve` wires it: a client of its plaintext listener, its
// registry and its admin listener, the defaults otherwise. It returns the console's base URL and its stop.
func inprocConsole(ctx context.Context, c *cluster, logPath string) (string, func(), error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	n1 := c.dc.Node(1)
	con, err := console.New(console.Config{
		ClientOpts:  []kgo.Opt{kgo.SeedBrokers(n1.Addr())},
		RegistryURL: "http://" + n1.RegistryAddr(),
		AdminURLs:   []string{"http://" + n1.HTTPAddr()},
		ConnectURL:  connectURL(n1),
		Logger:      slog.New(slog.NewTextHandler(logf, nil)),
	})
	if err != nil {
		logf.Close()
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		con.Close()
		logf.Close()
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = con.Serve(sctx, ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		cancel()
		<-done
		con.Close()
		logf.Close()
	}, nil
}

// connectURL is a node's Connect worker's REST URL; "" without one.
func connectURL(n *devcluster.Node) string {
	if n.ConnectAddr() == "" {
		return ""
	}
	return "http://" + n.ConnectAddr()
}
