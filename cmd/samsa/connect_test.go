package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/freeport"
)

// connectOverrides are a single node's configs with everything but
// Connect off, Connect on a free port.
func connectOverrides(t *testing.T, extra map[string]string) map[string]string {
	ov := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(t.TempDir(), "data"),
		"samsa.http.listener": "", "samsa.schema.registry.listener": "", "samsa.rest.listener": "",
		"samsa.connect.listener": "127.0.0.1:0"}
	for k, v := range extra {
		ov[k] = v
	}
	return ov
}

// TestServeRunsConnect: with samsa.connect.listener set, serve runs a
// distributed Connect worker on it with the samsa.connect.* defaults (its
// three topics compacted, its group connect-cluster); a FileStreamSource
// and a FileStreamSink created over the REST API copy a file's lines
// through a topic; on shutdown the worker stops with the broker.
func TestServeRunsConnect(t *testing.T) {
	dir := t.TempDir()
	m, stop := runServe(t, connectOverrides(t, map[string]string{"samsa.connect.offset.flush.interval.ms": "500"}),
		`msg="connect worker starting".* listener=(\S+) group=(\S+) cluster=(\S+)`)
	base, group, seed := "http://"+m[0], m[1], m[2]
	if group != "connect-cluster" {
		t.Errorf("group %s, want connect-cluster", group)
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	waitConnectReady(t, cl, base)

	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	if err := os.WriteFile(in, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kc, err := kgo.NewClient(kgo.SeedBrokers(seed))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	adm := kadm.NewClient(kc)
	if _, err := adm.CreateTopic(t.Context(), 1, 1, nil, "lines"); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]map[string]string{
		"src":  {"connector.class": "FileStreamSource", "file": in, "topic": "lines", "tasks.max": "1"},
		"sink": {"connector.class": "FileStreamSink", "file": out, "topics": "lines", "tasks.max": "1"},
	} {
		body, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
		if code, resp := restCall(t, cl, "POST", base+"/connectors", "", "", string(body)); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, resp)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := os.ReadFile(out)
		if string(got) == "one\ntwo\nthree\n" {
			break
		}
		if time.Now().After(deadline) {
			_, st := restCall(t, cl, "GET", base+"/connectors?expand=status", "", "", "")
			t.Fatalf("the sink file holds %q; statuses %s", got, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, st := restCall(t, cl, "GET", base+"/connectors/src/status", "", "", ""); code != 200 || !strings.Contains(st, `"state":"RUNNING"`) {
		t.Errorf("src status: %d %s", code, st)
	}

	// The defaults: Kafka's sample worker's topic names, compacted, with
	// Kafka's partition counts; the worker's group.
	topics, err := adm.ListTopics(t.Context(), "connect-configs", "connect-offsets", "connect-status")
	if err != nil {
		t.Fatal(err)
	}
	for name, parts := range map[string]int{"connect-configs": 1, "connect-offsets": 25, "connect-status": 5} {
		if d, ok := topics[name]; !ok || d.Err != nil || len(d.Partitions) != parts {
			t.Errorf("topic %s: %+v, want %d partitions", name, d, parts)
		}
	}
	rcs, err := adm.DescribeTopicConfigs(t.Context(), "connect-configs")
	if err != nil || len(rcs) != 1 {
		t.Fatalf("describe connect-configs: %v", err)
	}
	for _, c := range rcs[0].Configs {
		if c.Key == "cleanup.policy" && (c.Value == nil || *c.Value != "compact") {
			t.Errorf("connect-configs cleanup.policy %v", c.MaybeValue())
		}
	}
	groups, err := adm.DescribeGroups(t.Context(), "connect-cluster")
	if err != nil || groups["connect-cluster"].ProtocolType != "connect" || len(groups["connect-cluster"].Members) != 1 {
		t.Errorf("group connect-cluster: %+v (%v)", groups["connect-cluster"], err)
	}

	if err := stop(); err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if resp, err := cl.Get(base + "/connectors"); err == nil {
		resp.Body.Close()
		t.Error("Connect still answers after serve returned")
	}
}

// waitConnectReady waits for the worker to have joined its group.
func waitConnectReady(t *testing.T, cl *http.Client, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := restCall(t, cl, "GET", base+"/health", "", "", "")
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connect not ready: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestServeConnectRefusesBadConfig: a converter class the worker does
// not have stops serve's start with the reason, before any worker runs.
func TestServeConnectRefusesBadConfig(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(dropSink(make(chan string, 10)), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := serve(ctx, "", connectOverrides(t, map[string]string{"samsa.connect.value.converter": "com.example.NoSuchConverter"}), false, logger)
	if err == nil || !strings.Contains(err.Error(), "value.converter") || !strings.Contains(err.Error(), "com.example.NoSuchConverter") {
		t.Fatalf("serve returned %v, want the unknown value.converter named", err)
	}
}

// TestConnectWorkerConfig: how serve builds the worker's properties from
// samsa.connect.* and samsa.connect.worker.config, and what it refuses.
func TestConnectWorkerConfig(t *testing.T) {
	dir := t.TempDir()
	file := func(text string) string {
		p := filepath.Join(dir, fmt.Sprintf("w%d.properties", time.Now().UnixNano()))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	values := func(t *testing.T, ov map[string]string) config.Values {
		t.Helper()
		v, err := broker.LoadConfig("", ov)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	v := values(t, map[string]string{"samsa.connect.listener": "127.0.0.1:0", "samsa.connect.group.id": "g",
		"samsa.connect.offset.storage.replication.factor": "1",
		"samsa.connect.worker.config":                     file("offset.storage.partitions=3\nvalue.converter.schemas.enable=false\nrest.advertised.host.name=node1\n")})
	cfg, err := connectWorkerConfig(v, "127.0.0.1:9092", "127.0.0.1:18083")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GroupID != "g" || cfg.ConfigTopic != "connect-configs" || cfg.OffsetPartitions != 3 || cfg.OffsetReplication != 1 || cfg.ConfigReplication != -1 ||
		cfg.ValueConverter != "org.apache.kafka.connect.json.JsonConverter" || cfg.ConverterProps["value.converter.schemas.enable"] != "false" ||
		cfg.OffsetFlush != 10*time.Second || !cfg.Distributed || cfg.BootstrapServers[0] != "127.0.0.1:9092" ||
		cfg.Listeners[0] != "http://127.0.0.1:18083" || cfg.AdvertisedURL != "http://node1:18083" {
		t.Errorf("worker config %+v", cfg)
	}

	for _, c := range []struct {
		name string
		ov   map[string]string
		want string
	}{
		{"both set", map[string]string{"samsa.connect.group.id": "g", "samsa.connect.worker.config": file("group.id=h\n")}, "samsa.connect.group.id and group.id"},
		{"file sets bootstrap", map[string]string{"samsa.connect.worker.config": file("bootstrap.servers=elsewhere:9092\n")}, "bootstrap.servers is set by serve"},
		{"file sets listeners", map[string]string{"samsa.connect.worker.config": file("listeners=http://0.0.0.0:8083\n")}, "listeners is set by serve"},
		{"file sets security", map[string]string{"samsa.connect.worker.config": file("security.protocol=SSL\n")}, "security.protocol"},
		{"unknown property", map[string]string{"samsa.connect.worker.config": file("no.such.property=1\n")}, "unknown worker property no.such.property"},
		{"refused property", map[string]string{"samsa.connect.worker.config": file("plugin.path=/opt/connectors\n")}, "plugin.path"},
		{"missing file", map[string]string{"samsa.connect.worker.config": filepath.Join(dir, "absent")}, "samsa.connect.worker.config"},
		{"same topics", map[string]string{"samsa.connect.status.storage.topic": "connect-configs"}, "three different topics"},
		{"bad converter option", map[string]string{"samsa.connect.worker.config": file("key.converter.schemas.enable=maybe\n")}, "key.converter"},
		{"unknown key converter", map[string]string{"samsa.connect.key.converter": "Nope"}, "unknown converter class"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.ov["samsa.connect.listener"] = "127.0.0.1:0"
			_, err := connectWorkerConfig(values(t, c.ov), "127.0.0.1:9092", "127.0.0.1:18083")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}

	// The broker's own config checks.
	for name, val := range map[string]string{"samsa.connect.offset.flush.interval.ms": "0", "samsa.connect.listener": "8083",
		"samsa.connect.config.storage.replication.factor": "-2"} {
		if _, err := broker.LoadConfig("", map[string]string{name: val}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v, want refused", name, val, err)
		}
	}
}

// TestConnectOff: with samsa.connect.listener empty (the default) serve
// runs no worker; samsa.connect.* settings then take no effect and are
// refused.
func TestConnectOff(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(dropSink(make(chan string, 10)), nil))
	v, err := broker.LoadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.String("samsa.connect.listener") != "" {
		t.Fatalf("samsa.connect.listener defaults to %q, want off", v.String("samsa.connect.listener"))
	}
	// No broker: an off Connect must not touch it.
	if stop, _, err := startConnect(nil, v, logger); stop != nil || err != nil {
		t.Fatalf("off: %v %v", stop != nil, err)
	}
	v, err = broker.LoadConfig("", map[string]string{"samsa.connect.group.id": "g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := startConnect(nil, v, logger); err == nil || !strings.Contains(err.Error(), "samsa.connect.group.id set but samsa.connect.listener is empty") {
		t.Fatalf("settings without a listener: %v", err)
	}
}

// TestServeConnectRetriesStart: a worker that cannot start (its config
// topic exists and is not compacted) is retried with its port kept bound,
// and starts once the cause is gone; serve stops cleanly meanwhile too.
func TestServeConnectRetriesStart(t *testing.T) {
	ports, err := freeport.Pick(2)
	if err != nil {
		t.Fatal(err)
	}
	kafka, connectAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	data := filepath.Join(t.TempDir(), "data")
	ov := map[string]string{"listeners": "PLAINTEXT://" + kafka, "log.dirs": data,
		"samsa.http.listener": "", "samsa.schema.registry.listener": "", "samsa.rest.listener": ""}
	_, stop := runServe(t, ov, `msg="samsa serving"`)
	kc, err := kgo.NewClient(kgo.SeedBrokers(kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	adm := kadm.NewClient(kc)
	if r, err := adm.CreateTopic(t.Context(), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, "connect-configs"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	ov["samsa.connect.listener"] = connectAddr
	_, stop = runServe(t, ov, `msg="connect worker did not start; retrying".*cleanup.policy=delete`)
	if ln, err := net.Listen("tcp", connectAddr); err == nil {
		ln.Close()
		t.Fatal("the Connect port was let go after a failed start")
	}
	if _, err := adm.AlterTopicConfigs(t.Context(), []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, "connect-configs"); err != nil {
		t.Fatal(err)
	}
	waitConnectReady(t, &http.Client{Timeout: 20 * time.Second}, "http://"+connectAddr)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Stopped while a start is failing: serve returns promptly.
	ov["samsa.connect.config.storage.replication.factor"] = "3" // one broker: never enough
	ov["samsa.connect.config.storage.topic"] = "other-configs"
	_, stop = runServe(t, ov, `msg="connect worker did not start; retrying"`)
	begin := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("serve took %v to stop during a failing start", d)
	}
}
