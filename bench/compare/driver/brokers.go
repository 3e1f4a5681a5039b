package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/bench/internal/kafkanode"
	"github.com/samsa-io/samsa/internal/freeport"
)

// brokerKind knows how to lay out a fresh data directory for one broker and
// how to start it on given ports.
type brokerKind interface {
	name() string
	// full reports whether the broker runs every phase: start-up, idle
	// memory, the e2e latency workloads and recovery. kfake, the client
	// ceiling, runs only the produce and consume workloads.
	full() bool
	// prepare lays out dir for a first start (Kafka formats its storage).
	prepare(b *broker) error
	command(b *broker) *exec.Cmd
	// tls is the PEM material of a broker whose client listener is SSL
	// (the TLS mode's samsa-tls, kafka-tls); nil for plaintext.
	tls() *tlsFiles
}

// broker is one broker process on one data directory; restart reuses the
// directory and the ports.
type broker struct {
	kind     brokerKind
	dir      string
	port     int // client listener
	ctrlPort int // Kafka's controller listener
	cmd      *exec.Cmd
	exited   chan struct{}
	started  time.Time
}

func (b *broker) addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }
func (b *broker) pid() int     { return b.cmd.Process.Pid }

// servers is what a workload runs against: one broker process, or every
// process of a cluster, whose CPU and memory are then read per process.
type servers interface {
	name() string // the broker kind, as results.jsonl names it
	bootstrap() string
	pids() []int
	alive() bool // every process still runs
	logTail() string
	// clientArgs are the flags `samsa bench` needs besides the address
	// (TLS on an SSL listener).
	clientArgs() []string
}

func (b *broker) name() string      { return b.kind.name() }
func (b *broker) bootstrap() string { return b.addr() }
func (b *broker) pids() []int       { return []int{b.pid()} }

// clientArgs are the flags `samsa bench` needs to reach the broker's
// listener besides its address: TLS and its CA on an SSL listener.
func (b *broker) clientArgs() []string {
	if f := b.kind.tls(); f != nil {
		return f.benchArgs()
	}
	return nil
}

// newBroker picks free loopback ports and prepares a fresh directory.
func newBroker(kind brokerKind, dir string) (*broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := &broker{kind: kind, dir: dir}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	b.port, b.ctrlPort = ports[0], ports[1]
	if err := kind.prepare(b); err != nil {
		return nil, fmt.Errorf("%s: prepare %s: %w", kind.name(), dir, err)
	}
	return b, nil
}

// start launches the process and returns at once; started is taken just
// before the fork so start-up timings include exec and runtime start.
func (b *broker) start() error {
	b.cmd = b.kind.command(b)
	logf, err := os.OpenFile(filepath.Join(b.dir, "broker.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b.started = time.Now()
	if err := b.cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	b.exited = make(chan struct{})
	go func() {
		_ = b.cmd.Wait()
		logf.Close()
		close(b.exited)
	}()
	return nil
}

// alive reports whether the process is still running.
func (b *broker) alive() bool {
	select {
	case <-b.exited:
		return false
	default:
		return true
	}
}

// stop asks the broker to shut down (SIGTERM) and kills it after grace.
func (b *broker) stop(grace time.Duration) {
	if b.cmd == nil || !b.alive() {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(grace):
		b.kill9()
	}
}

// kill9 is a crash: SIGKILL, no chance to flush anything.
func (b *broker) kill9() {
	if b.cmd == nil || !b.alive() {
		return
	}
	_ = b.cmd.Process.Kill()
	<-b.exited
}

// logTail is the end of the broker's log, for error messages.
func (b *broker) logTail() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "broker.log"))
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// freePorts picks n distinct free loopback ports outside the kernel's
// ephemeral range (internal/freeport). They are free again on return:
// another process may take one before a broker binds it.
func freePorts(n int) ([]int, error) { return freeport.Pick(n) }

// samsaKind runs bin/samsa serve: by default acks once a write is in the
// page cache ("samsa"), with durable after a group-committed fsync
// ("samsa-durable"); with tlsFiles its listener is SSL ("samsa-tls").
type samsaKind struct {
	bin      string
	durable  bool
	tlsFiles *tlsFiles
}

func (s samsaKind) name() string {
	n := "samsa"
	if s.durable {
		n += "-durable"
	}
	if s.tlsFiles != nil {
		n += "-tls"
	}
	return n
}
func (samsaKind) full() bool            { return true }
func (samsaKind) prepare(*broker) error { return nil }
func (s samsaKind) tls() *tlsFiles      { return s.tlsFiles }

func (s samsaKind) command(b *broker) *exec.Cmd {
	protocol := "PLAINTEXT"
	if s.tlsFiles != nil {
		protocol = "SSL"
	}
	args := []string{"serve",
		"--listeners", protocol + "://" + b.addr(),
		"--log.dirs", filepath.Join(b.dir, "data"),
		// As in the Kafka config below; Samsa's own default is Kafka's 3000.
		"--override", "group.initial.rebalance.delay.ms=0",
		// No metrics listener nor Schema Registry: their default ports
		// may be taken.
		"--override", "samsa.http.listener=",
		"--override", "samsa.schema.registry.listener=",
	}
	if f := s.tlsFiles; f != nil {
		// One PEM file, key then chain, read as Kafka reads a PEM key
		// store file; unlike Kafka, Samsa takes the key unencrypted.
		for _, o := range []string{"ssl.keystore.type=PEM", "ssl.keystore.location=" + f.Keystore,
			"ssl.truststore.type=PEM", "ssl.truststore.location=" + f.CA} {
			args = append(args, "--override", o)
		}
	}
	if s.durable {
		args = append(args, "--durable")
	}
	return exec.Command(s.bin, args...)
}

// kafkaKind runs Apache Kafka from the jars in libs as a KRaft
// broker+controller, with the JVM options of kafka-server-start.sh and
// kafka-run-class.sh: a single node, or, with quorum set, one node of a
// static quorum (kafka-3).
type kafkaKind struct {
	java  string
	libs  string
	log4j string // log4j2 configuration file
	heap  string // e.g. 1G
	// quorum and nodeID make this node nodeID of a cluster; nil is the
	// single node (node.id 1, a standalone dynamic quorum of one).
	quorum *kafkaQuorum
	nodeID int
	// tlsFiles makes the client listener SSL ("kafka-tls"), a single node
	// only; cipherSuites is then its ssl.cipher.suites, if set.
	tlsFiles     *tlsFiles
	cipherSuites string
}

// kafkaQuorum is what every node of a Kafka cluster shares.
type kafkaQuorum struct {
	kind      string // kafka-3
	nodes     int
	voters    string // controller.quorum.voters: id@host:port,...
	clusterID string // the one cluster ID every node is formatted with
}

func (k kafkaKind) name() string {
	switch {
	case k.quorum != nil:
		return k.quorum.kind
	case k.tlsFiles != nil:
		return "kafka-tls"
	}
	return "kafka"
}
func (kafkaKind) full() bool       { return true }
func (k kafkaKind) tls() *tlsFiles { return k.tlsFiles }

// serverProperties are Kafka's config/server.properties for a combined node,
// reduced to what differs from the broker defaults, plus the replication
// factors: for a single node those it needs (Samsa's defaults,
// internal/broker/serve.go); for a cluster RF 3 and min ISR 2 for every
// topic (the internal topics' defaults are already 3 and 2). With TLS the
// client listener, also the inter-broker one, is SSL with a PEM key store
// given inline and the CA as a PEM trust store file; the controller
// listener stays plaintext: no workload traffic crosses it.
func (k kafkaKind) serverProperties(b *broker) string {
	ctrl := "127.0.0.1:" + strconv.Itoa(b.ctrlPort)
	listener := "PLAINTEXT"
	if k.tlsFiles != nil {
		listener = "SSL"
	}
	lines := kafkanode.CombinedProperties(listener, b.addr(), ctrl, filepath.Join(b.dir, "data"))
	if f := k.tlsFiles; f != nil {
		lines = append(lines,
			"ssl.keystore.type=PEM",
			"ssl.keystore.certificate.chain="+inlinePEM(f.ChainPEM),
			"ssl.keystore.key="+inlinePEM(f.KeyPEM),
			"ssl.truststore.type=PEM",
			"ssl.truststore.location="+f.CA,
		)
		if k.cipherSuites != "" {
			lines = append(lines, "ssl.cipher.suites="+k.cipherSuites)
		}
	}
	if q := k.quorum; q != nil {
		return strings.Join(append(lines,
			"node.id="+strconv.Itoa(k.nodeID),
			"controller.quorum.voters="+q.voters,
			"default.replication.factor="+strconv.Itoa(min(3, q.nodes)),
			"min.insync.replicas="+strconv.Itoa(min(2, q.nodes)),
		), "\n") + "\n"
	}
	return strings.Join(append(lines, kafkanode.SingleNodeProperties(ctrl)...), "\n") + "\n"
}

func (k kafkaKind) propsPath(b *broker) string { return filepath.Join(b.dir, "server.properties") }

// prepare writes server.properties and formats the storage: a single node
// as a standalone dynamic quorum (--standalone, KIP-853); a cluster's node
// for the static quorum its controller.quorum.voters names, which
// StorageTool formats with no quorum flag, each node with the cluster's one
// ID.
func (k kafkaKind) prepare(b *broker) error {
	if err := os.WriteFile(k.propsPath(b), []byte(k.serverProperties(b)), 0o644); err != nil {
		return err
	}
	quorumArgs := []string{"--standalone", "-t", kafkanode.NewClusterID()}
	if k.quorum != nil {
		quorumArgs = []string{"-t", k.quorum.clusterID}
	}
	return kafkanode.Format(k.java, k.log4j, k.libs, k.propsPath(b), quorumArgs...)
}

func (k kafkaKind) command(b *broker) *exec.Cmd {
	return exec.Command(k.java, kafkanode.ServerArgs(b.dir, k.log4j, k.heap, k.libs, k.propsPath(b))...)
}

// kfakeKind runs test/kfakeserver, franz-go's in-memory Kafka fake in its
// own process: no disk, no fsync, no replication, so its throughput is the
// most the load generator on this machine gets from any broker (the client
// ceiling).
type kfakeKind struct{ bin string }

func (kfakeKind) name() string          { return "kfake" }
func (kfakeKind) full() bool            { return false }
func (kfakeKind) prepare(*broker) error { return nil }
func (kfakeKind) tls() *tlsFiles        { return nil }

func (k kfakeKind) command(b *broker) *exec.Cmd {
	return exec.Command(k.bin, "-port", strconv.Itoa(b.port))
}

// kfakeListening waits for kfakeserver's "listening ADDR" line and checks
// that ADDR is the address it was told to use.
func kfakeListening(b *broker, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(filepath.Join(b.dir, "broker.log"))
		for _, l := range strings.Split(string(data), "\n") {
			if addr, ok := strings.CutPrefix(strings.TrimSpace(l), "listening "); ok {
				if addr != b.addr() {
					return fmt.Errorf("kfake: listening on %s, want %s", addr, b.addr())
				}
				return nil
			}
		}
		if !b.alive() {
			return fmt.Errorf("kfake: %w before listening:\n%s", errExited, b.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("kfake: no \"listening\" line within %s:\n%s", timeout, b.logTail())
}

// kafkaVersion reads the Kafka version from the kafka_2.13 jar's name.
func kafkaVersion(libs string) string {
	m, _ := filepath.Glob(filepath.Join(libs, "kafka_2.13-*.jar"))
	if len(m) == 0 {
		return "unknown"
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "kafka_2.13-"), ".jar")
}

var errExited = errors.New("broker exited")
