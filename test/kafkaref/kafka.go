package kafkaref

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/task"
)

// Timeouts: a JVM broker starts in seconds on an idle machine, but the
// test machines are small and shared.
const (
	kafkaStartTimeout = 2 * time.Minute
	kafkaStopGrace    = 15 * time.Second
	// startAttempts bounds the retries after a port was taken between
	// picking it and the broker binding it.
	startAttempts = 3
)

// Kafka is one Apache Kafka node, broker and KRaft controller in one JVM.
type Kafka struct {
	// Bootstrap is the PLAINTEXT listener, host:port.
	Bootstrap string
	// Dir holds server.properties, data/ and kafka.log.
	Dir string
	// ClusterID is what the storage was formatted with.
	ClusterID string
	proc      *process
	libs      string // the broker's jars, for Restart
}

// errPortInUse is a start that lost a port to another process.
var errPortInUse = errors.New("a port was taken before the broker bound it")

// StartKafka starts a single combined-mode Apache Kafka node (KRaft,
// KafkaVersion, jars from Maven Central) on free loopback ports, with the
// single-node replication factors, and waits until it answers Metadata.
// extra are server properties, "key=value", after (so over) the defaults.
// The node is stopped (SIGTERM, SIGKILL after 15 s) when the test ends;
// its log is printed when the test failed. It skips the test when Java or
// Maven is missing, unless SAMSA_REQUIRE_JAVA is set or CI=true.
func StartKafka(t testing.TB, extra ...string) *Kafka {
	t.Helper()
	return StartKafkas(t, 1, extra...)[0]
}

// StartKafkas starts n independent single-node clusters side by side (JVM
// start-up is mostly one thread, so this is faster than n StartKafka
// calls), each as StartKafka does.
func StartKafkas(t testing.TB, n int, extra ...string) []*Kafka {
	t.Helper()
	for _, kv := range extra {
		if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
			t.Fatalf("kafkaref: server property %q is not key=value", kv)
		}
	}
	libs := brokerClasspath(t)
	nodes := make([]*Kafka, n)
	errs := make([]error, n)
	// The starts run under the test's context: Stop cancels the group's
	// own before it waits, so Stop here only waits.
	g := task.NewGroup(context.Background())
	for i := range n {
		g.Go(func(context.Context) { nodes[i], errs[i] = startKafka(t.Context(), t, libs, extra) })
	}
	g.Stop()
	t.Cleanup(func() {
		// Side by side: each broker takes seconds to shut down.
		g := task.NewGroup(context.Background())
		for _, k := range nodes {
			if k != nil {
				g.Go(func(context.Context) { k.proc.stop(kafkaStopGrace) })
			}
		}
		g.Stop()
		for _, k := range nodes {
			if k != nil && t.Failed() {
				t.Logf("Apache Kafka at %s, %s (last lines):\n%s", k.Bootstrap, k.proc.logPath, k.proc.logTail(40))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("kafkaref: %v", err)
	}
	return nodes
}

// startKafka makes a node's directory, formats it and starts the node,
// again on new ports when one was taken.
func startKafka(ctx context.Context, t testing.TB, libs string, extra []string) (*Kafka, error) {
	var err error
	for range startAttempts {
		k := &Kafka{Dir: t.TempDir(), ClusterID: newClusterID(), libs: libs}
		if err = k.start(ctx, libs, extra); err == nil {
			return k, nil
		}
		if !errors.Is(err, errPortInUse) {
			return nil, err
		}
		t.Logf("kafkaref: %v; again on other ports", err)
	}
	return nil, err
}

func (k *Kafka) start(ctx context.Context, libs string, extra []string) error {
	ports, err := freeport.Pick(2)
	if err != nil {
		return err
	}
	k.Bootstrap = "127.0.0.1:" + strconv.Itoa(ports[0])
	controller := "127.0.0.1:" + strconv.Itoa(ports[1])
	props := filepath.Join(k.Dir, "server.properties")
	if err := os.WriteFile(props, []byte(serverProperties(k.Dir, k.Bootstrap, controller, extra)), 0o644); err != nil {
		return err
	}
	// --standalone: a dynamic quorum of this one controller (KIP-853).
	format := exec.Command(javaBin(), append(jvmArgs("256m"), "-cp", filepath.Join(libs, "*"), "kafka.tools.StorageTool", "format",
		"--standalone", "-t", k.ClusterID, "-c", props)...)
	if out, err := format.CombinedOutput(); err != nil {
		return fmt.Errorf("format %s: %w\n%s", k.Dir, err, lastLines(string(out), 10))
	}
	if err := k.run(); err != nil {
		return err
	}
	if err := k.awaitMetadata(ctx); err != nil {
		k.proc.kill()
		if strings.Contains(k.proc.logTail(200), "Address already in use") {
			return fmt.Errorf("kafka on %s: %w", k.Bootstrap, errPortInUse)
		}
		return fmt.Errorf("kafka on %s: %w\n%s", k.Bootstrap, err, k.proc.logTail(30))
	}
	return nil
}

// run starts the broker's JVM on the formatted directory.
func (k *Kafka) run() error {
	cmd := exec.Command(javaBin(), append(jvmArgs("512m"), "-Dkafka.logs.dir="+k.Dir, "-cp", filepath.Join(k.libs, "*"),
		"kafka.Kafka", filepath.Join(k.Dir, "server.properties"))...)
	var err error
	k.proc, err = startProcess(cmd, filepath.Join(k.Dir, "kafka.log"))
	return err
}

// Restart stops the node as an operator does (SIGTERM: a controlled
// shutdown; SIGKILL after 15 s), starts it again on the same directory and
// ports, and waits until it answers Metadata, for tests of what survives a
// restart. The test's end stops the new process.
func (k *Kafka) Restart(ctx context.Context) error {
	k.proc.stop(kafkaStopGrace)
	if err := k.run(); err != nil {
		return fmt.Errorf("kafkaref: restart %s: %w", k.Bootstrap, err)
	}
	if err := k.awaitMetadata(ctx); err != nil {
		return fmt.Errorf("kafkaref: restart %s: %w\n%s", k.Bootstrap, err, k.proc.logTail(30))
	}
	return nil
}

// serverProperties is a combined node's server.properties: as
// bench/compare's single node (driver/brokers.go), plus the extras, which
// Java's Properties lets override an earlier line.
func serverProperties(dir, bootstrap, controller string, extra []string) string {
	lines := []string{
		"process.roles=broker,controller",
		"node.id=1",
		"listeners=PLAINTEXT://" + bootstrap + ",CONTROLLER://" + controller,
		"advertised.listeners=PLAINTEXT://" + bootstrap + ",CONTROLLER://" + controller,
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"controller.quorum.bootstrap.servers=" + controller,
		"log.dirs=" + filepath.Join(dir, "data"),
		"num.partitions=1",
		"group.initial.rebalance.delay.ms=0",
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"share.coordinator.state.topic.replication.factor=1",
		"share.coordinator.state.topic.min.isr=1",
	}
	return strings.Join(append(lines, extra...), "\n") + "\n"
}

// awaitMetadata waits until the node answers Metadata naming itself as
// the one broker: it has registered with its controller and is unfenced.
func (k *Kafka) awaitMetadata(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaStartTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	last := errors.New("no answer yet")
	for {
		if !k.proc.alive() {
			return fmt.Errorf("the broker exited before it answered Metadata")
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		md, err := adm.BrokerMetadata(rctx)
		rcancel()
		switch {
		case err != nil:
			last = err
		case len(md.Brokers) != 1:
			last = fmt.Errorf("metadata lists %d brokers", len(md.Brokers))
		default:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no Metadata answer within %v: %v", kafkaStartTimeout, last)
		case <-k.proc.exited:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Kill crashes the node (SIGKILL), for failure tests; the test's end does
// nothing more to it.
func (k *Kafka) Kill() { k.proc.kill() }

// Alive reports whether the node's process still runs.
func (k *Kafka) Alive() bool { return k.proc.alive() }

// LogPath is the node's log file.
func (k *Kafka) LogPath() string { return k.proc.logPath }

// newClusterID is a random Kafka Uuid in base64url that does not start
// with '-', which the storage tool's parser would take for an option.
func newClusterID() string {
	id := make([]byte, 16)
	for {
		_, _ = rand.Read(id)
		if s := base64.RawURLEncoding.EncodeToString(id); s[0] != '-' {
			return s
		}
	}
}
