package kafkanode

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/bench/internal/procstat"
	"github.com/samsa-io/samsa/internal/freeport"
)

// CombinedProperties are the lines of Kafka's config/server.properties for
// a combined node, reduced to what differs from the broker defaults: the
// client listener (protocol PLAINTEXT or SSL, also the inter-broker one) on
// addr, the controller listener (plaintext) on ctrl, data in dataDir, one
// partition per topic by default and no initial rebalance delay (as Samsa
// is run by the benchmarks).
func CombinedProperties(protocol, addr, ctrl, dataDir string) []string {
	return []string{
		"process.roles=broker,controller",
		"listeners=" + protocol + "://" + addr + ",CONTROLLER://" + ctrl,
		"advertised.listeners=" + protocol + "://" + addr + ",CONTROLLER://" + ctrl,
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=" + protocol,
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT," + protocol + ":" + protocol,
		"log.dirs=" + dataDir,
		"num.partitions=1",
		"group.initial.rebalance.delay.ms=0",
	}
}

// SingleNodeProperties make a combined node a cluster of its own: node 1,
// the controller at ctrl, and the replication factors of the internal
// topics a single node needs (Samsa's defaults, internal/broker/serve.go).
func SingleNodeProperties(ctrl string) []string {
	return []string{
		"node.id=1",
		"controller.quorum.bootstrap.servers=" + ctrl,
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"share.coordinator.state.topic.replication.factor=1",
		"share.coordinator.state.topic.min.isr=1",
	}
}

// Format formats the storage of the node whose server.properties is props
// with the jars in libs (kafka.tools.StorageTool format); quorum are its
// quorum flags: "--standalone", "-t", ID for a single node (a dynamic
// quorum of one, KIP-853), "-t", ID for a node of a static quorum.
func Format(java, log4j, libs, props string, quorum ...string) error {
	args := append([]string{"-Dlog4j2.configurationFile=" + log4j, "-cp", filepath.Join(libs, "*"),
		"kafka.tools.StorageTool", "format"}, quorum...)
	out, err := exec.Command(java, append(args, "-c", props)...).CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("storage format: %w: %s", err, strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
	return nil
}

// ServerArgs are the java arguments of kafka-server-start.sh and
// kafka-run-class.sh for the node whose server.properties is props: heap
// (e.g. 1G) as KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS, -loggc and the
// JMX and log4j options, with its logs in dir.
func ServerArgs(dir, log4j, heap, libs, props string) []string {
	return []string{
		// KAFKA_HEAP_OPTS
		"-Xmx" + heap, "-Xms" + heap,
		// KAFKA_JVM_PERFORMANCE_OPTS
		"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
		"-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
		// kafka-server-start.sh -loggc
		"-Xlog:gc*:file=" + filepath.Join(dir, "kafkaServer-gc.log") + ":time,tags:filecount=10,filesize=100M",
		// KAFKA_JMX_OPTS (no JMX_PORT)
		"-Dcom.sun.management.jmxremote", "-Dcom.sun.management.jmxremote.authenticate=false",
		"-Dcom.sun.management.jmxremote.ssl=false",
		// KAFKA_LOG4J_OPTS
		"-Dkafka.logs.dir=" + dir, "-Dlog4j2.configurationFile=" + log4j,
		"-cp", filepath.Join(libs, "*"), "kafka.Kafka", props,
	}
}

// NewClusterID is a random Kafka Uuid in base64url. Like Kafka's
// Uuid.randomUuid it never starts with '-', which the storage tool's
// argument parser would take for an option.
func NewClusterID() string {
	id := make([]byte, 16)
	for {
		_, _ = rand.Read(id)
		if s := base64.RawURLEncoding.EncodeToString(id); s[0] != '-' {
			return s
		}
	}
}

// Options say which Kafka a Start runs and how.
type Options struct {
	Java  string // the java command
	Libs  string // the kafka_2.13 jar and its dependencies
	Log4j string // log4j2 configuration file
	Heap  string // -Xmx and -Xms, e.g. 1G
	// Extra are server properties, key=value, after (so over) the
	// defaults: Java's Properties keeps a key's last line.
	Extra []string
}

// Node is one single-node Apache Kafka cluster a benchmark runs.
type Node struct {
	*procstat.Process
	Addr  string
	Admin *kadm.Client
}

// startAttempts bounds the starts on new ports after a port was taken
// between picking it and the node binding it.
const startAttempts = 3

// Start runs a single plaintext combined node on free loopback ports,
// server.properties, data and kafka.log in dir (emptied first: a fresh
// node each time), and waits (up to two
// minutes: the machines are small and shared) until it answers Metadata
// naming itself.
func Start(ctx context.Context, o Options, dir string) (*Node, error) {
	for _, kv := range o.Extra {
		if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("kafka server property %q is not key=value", kv)
		}
	}
	var err error
	for range startAttempts {
		var n *Node
		if n, err = start(ctx, o, dir); err == nil {
			return n, nil
		}
		if !strings.Contains(err.Error(), "Address already in use") {
			return nil, err
		}
	}
	return nil, err
}

func start(ctx context.Context, o Options, dir string) (*Node, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := freeport.Pick(2)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	ctrl := "127.0.0.1:" + strconv.Itoa(ports[1])
	lines := append(CombinedProperties("PLAINTEXT", addr, ctrl, filepath.Join(dir, "data")), SingleNodeProperties(ctrl)...)
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte(strings.Join(append(lines, o.Extra...), "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := Format(o.Java, o.Log4j, o.Libs, props, "--standalone", "-t", NewClusterID()); err != nil {
		return nil, err
	}
	p, err := procstat.Start(exec.Command(o.Java, ServerArgs(dir, o.Log4j, o.Heap, o.Libs, props)...), filepath.Join(dir, "kafka.log"))
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		p.Stop(15 * time.Second)
		return nil, err
	}
	n := &Node{Process: p, Addr: addr, Admin: kadm.NewClient(cl)}
	if err := n.awaitMetadata(ctx, 2*time.Minute); err != nil {
		n.Admin.Close()
		p.Stop(15 * time.Second)
		data, _ := os.ReadFile(p.Log)
		if strings.Contains(string(data), "Address already in use") {
			err = fmt.Errorf("%w: Address already in use", err)
		}
		return nil, fmt.Errorf("kafka on %s: %w (log %s)", addr, err, p.Log)
	}
	return n, nil
}

// awaitMetadata waits until the node answers Metadata with itself as the
// one broker: it has registered with its controller and is unfenced.
func (n *Node) awaitMetadata(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := fmt.Errorf("no answer yet")
	for {
		if !n.Alive() {
			return fmt.Errorf("exited before it answered Metadata")
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		md, err := n.Admin.BrokerMetadata(c)
		cancel()
		switch {
		case err != nil:
			last = err
		case len(md.Brokers) != 1:
			last = fmt.Errorf("metadata lists %d brokers", len(md.Brokers))
		default:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no Metadata answer within %v: %v", timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop closes the admin client and stops the node (SIGTERM, SIGKILL after
// grace).
func (n *Node) Stop(grace time.Duration) {
	n.Admin.Close()
	n.Process.Stop(grace)
}
