package mirror

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// readTopic reads a topic from its start until done says so or a minute
// passes, answering what it read.
func readTopic(t *testing.T, addr, topic string, done func([]*kgo.Record) bool) []*kgo.Record {
	t.Helper()
	cl := client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for !done(recs) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s on %s: gave up after %d records", topic, addr, len(recs))
		}
		recs = append(recs, fs.Records()...)
	}
	return recs
}

// startWorker starts a distributed Connect worker whose cluster is addr.
func startWorker(t *testing.T, addr string, extra ...string) *devcluster.ConnectWorker {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	props := append([]string{
		"bootstrap.servers=" + addr, "group.id=mm2-connect",
		"config.storage.topic=connect-configs", "offset.storage.topic=connect-offsets", "status.storage.topic=connect-status",
		"config.storage.replication.factor=1", "offset.storage.replication.factor=1", "status.storage.replication.factor=1",
		"offset.flush.interval.ms=500", "session.timeout.ms=6000", "heartbeat.interval.ms=1000",
		"scheduled.rebalance.max.delay.ms=1000",
		"key.converter=org.apache.kafka.connect.json.JsonConverter", "value.converter=org.apache.kafka.connect.json.JsonConverter",
	}, extra...)
	return devcluster.StartConnectWorker(t, bin, t.TempDir(), strings.Join(props, "\n")+"\n", nil)
}

// connectorConfig is what all three connectors get, as Kafka's docs have
// one shared config for them.
func connectorConfig(class, src, tgt string) map[string]string {
	return map[string]string{
		"connector.class":                       class,
		"tasks.max":                             "2",
		"clusters":                              "A,B",
		"source.cluster.alias":                  "A",
		"target.cluster.alias":                  "B",
		"source.cluster.bootstrap.servers":      src,
		"target.cluster.bootstrap.servers":      tgt,
		"key.converter":                         byteArrayConverter,
		"value.converter":                       byteArrayConverter,
		"header.converter":                      byteArrayConverter,
		"topics":                                "orders.*",
		"groups":                                "app",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"checkpoints.topic.replication.factor":  "1",
		"heartbeats.topic.replication.factor":   "1",
		"refresh.topics.interval.seconds":       "1",
		"refresh.groups.interval.seconds":       "1",
		"emit.checkpoints.interval.seconds":     "1",
		"emit.heartbeats.interval.seconds":      "1",
		"sync.group.offsets.enabled":            "true",
		"sync.group.offsets.interval.seconds":   "1",
	}
}

func createConnector(t *testing.T, w *devcluster.ConnectWorker, name string, cfg map[string]string) {
	t.Helper()
	code, body, err := w.Call("PUT", "/connectors/"+name+"/config", cfg, nil)
	if err != nil || code >= 300 {
		t.Fatalf("PUT %s: %d %s %v", name, code, body, err)
	}
}

// TestConnectorsMirror runs MirrorMaker 2's three connectors on a Connect
// worker of the target cluster B, mirroring cluster A: the records land in
// A.<topic> on B in the same partitions with their keys, values, headers
// and timestamps; offset syncs are on A, checkpoints and synced group
// offsets and heartbeats on B, the source offsets in the worker's offsets
// topic, each in MirrorMaker 2's format; a topic created later is picked up.
func TestConnectorsMirror(t *testing.T) {
	src, _ := devcluster.StartTestBroker(t)
	tgt, _ := devcluster.StartTestBroker(t)
	ctx := context.Background()
	srcAdm := kadm.NewClient(client(t, src))
	if _, err := srcAdm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": ptr("86400000")}, "orders"); err != nil {
		t.Fatal(err)
	}
	prod := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.UnixMilli(1_700_000_000_000)
	var sent []*kgo.Record
	for i := range 30 {
		r := &kgo.Record{Topic: "orders", Partition: int32(i % 3), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i),
			Headers:   []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "x%d", i)}, {Key: "empty", Value: []byte{}}},
			Timestamp: base.Add(time.Duration(i) * time.Second)}
		if i == 7 {
			r.Key = nil // a null key stays null
		}
		sent = append(sent, r)
	}
	if err := prod.ProduceSync(ctx, sent...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The group app read 10 of each partition on A.
	commit := kadm.Offsets{}
	for p := range int32(3) {
		commit.Add(kadm.Offset{Topic: "orders", Partition: p, At: 10, LeaderEpoch: -1})
	}
	if _, err := srcAdm.CommitOffsets(ctx, "app", commit); err != nil {
		t.Fatal(err)
	}

	w := startWorker(t, tgt)
	createConnector(t, w, "mm2-source", connectorConfig(SourceClass, src, tgt))
	createConnector(t, w, "mm2-checkpoint", connectorConfig("MirrorCheckpointConnector", src, tgt))
	createConnector(t, w, "mm2-heartbeat", connectorConfig("MirrorHeartbeat", src, tgt))

	// Records: same partitions, keys, values, headers, timestamps.
	got := readTopic(t, tgt, "A.orders", func(rs []*kgo.Record) bool { return len(rs) >= len(sent) })
	if len(got) != len(sent) {
		t.Fatalf("A.orders has %d records, want %d", len(got), len(sent))
	}
	byValue := map[string]*kgo.Record{}
	for _, r := range got {
		byValue[string(r.Value)] = r
	}
	for _, s := range sent {
		r := byValue[string(s.Value)]
		if r == nil {
			t.Fatalf("%s not mirrored", s.Value)
		}
		if r.Partition != s.Partition || !bytes.Equal(r.Key, s.Key) || (r.Key == nil) != (s.Key == nil) ||
			!r.Timestamp.Equal(s.Timestamp) || fmt.Sprint(r.Headers) != fmt.Sprint(s.Headers) {
			t.Errorf("mirrored %s: partition %d key %q ts %v headers %v; want %d %q %v %v",
				s.Value, r.Partition, r.Key, r.Timestamp, r.Headers, s.Partition, s.Key, s.Timestamp, s.Headers)
		}
	}

	// Offset syncs on the source, in MM2's format, naming the source topic.
	readTopic(t, src, "mm2-offset-syncs.B.internal", func(rs []*kgo.Record) bool {
		last := map[int32]int64{}
		for _, r := range rs {
			s, err := mm2.DecodeOffsetSync(r.Key, r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if s.Topic != "orders" {
				t.Fatalf("offset sync for %q", s.Topic)
			}
			last[s.Partition] = s.UpstreamOffset
		}
		return len(last) == 3 && last[0] == 9 && last[1] == 9 && last[2] == 9
	})

	// Checkpoints on the target: app's offset 10 translated to 10.
	readTopic(t, tgt, "A.checkpoints.internal", func(rs []*kgo.Record) bool {
		down := map[int32]int64{}
		for _, r := range rs {
			cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Group != "app" || cp.Topic != "A.orders" || cp.UpstreamOffset != 10 {
				t.Fatalf("checkpoint %+v", cp)
			}
			down[cp.Partition] = cp.DownstreamOffset
		}
		return len(down) == 3 && down[0] == 10 && down[1] == 10 && down[2] == 10
	})

	// The group's offsets synced on the target (it has no member there).
	tgtAdm := kadm.NewClient(client(t, tgt))
	waitFor(t, "app's offsets on B", func() bool {
		offs, err := tgtAdm.FetchOffsets(ctx, "app")
		if err != nil {
			return false
		}
		for p := range int32(3) {
			o, ok := offs.Lookup("A.orders", p)
			if !ok || o.At != 10 {
				return false
			}
		}
		return true
	})

	// Heartbeats A->B on the target.
	readTopic(t, tgt, "heartbeats", func(rs []*kgo.Record) bool {
		for _, r := range rs {
			h, err := mm2.DecodeHeartbeat(r.Key, r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if h.SourceCluster != "A" || h.TargetCluster != "B" || time.Since(time.UnixMilli(h.Timestamp)) > time.Hour {
				t.Fatalf("heartbeat %+v", h)
			}
		}
		return len(rs) >= 2
	})

	// The source offsets in the worker's offsets topic, as MirrorSourceConnector's.
	readTopic(t, tgt, "connect-offsets", func(rs []*kgo.Record) bool {
		last := map[int32]int64{}
		for _, r := range rs {
			conn, cluster, topic, p, off, err := mm2.DecodeSourceOffset(r.Key, r.Value)
			if err != nil || conn != "mm2-source" {
				continue // the checkpoint and heartbeat connectors' offsets
			}
			if cluster != "A" || topic != "orders" {
				t.Fatalf("source offset of %s %s", cluster, topic)
			}
			last[p] = off
		}
		return len(last) == 3 && last[0] == 9 && last[1] == 9 && last[2] == 9
	})

	// A worker that stops and starts again goes on from the stored source
	// offsets: the new records once, nothing copied twice.
	if err := w.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	var more []*kgo.Record
	for i := range 6 {
		more = append(more, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: fmt.Appendf(nil, "after%d", i)})
	}
	if err := prod.ProduceSync(ctx, more...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	startWorker(t, tgt)
	readTopic(t, tgt, "A.orders", func(rs []*kgo.Record) bool { return len(rs) >= len(sent)+len(more) })
	time.Sleep(2 * time.Second) // room for duplicates to show
	ends, err := tgtAdm.ListEndOffsets(ctx, "A.orders")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != int64(len(sent)+len(more)) {
		t.Errorf("A.orders has %d records after the restart, want %d", total, len(sent)+len(more))
	}

	// A new topic matching the filter is picked up by the refresh.
	if _, err := srcAdm.CreateTopic(ctx, 1, 1, nil, "orders.late"); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "orders.late", Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	late := readTopic(t, tgt, "A.orders.late", func(rs []*kgo.Record) bool { return len(rs) >= 1 })
	if string(late[0].Value) != "late" {
		t.Errorf("A.orders.late: %q", late[0].Value)
	}
}

// TestConnectorConfigRefused: configs the connectors cannot honour are
// refused when created, with the reason.
func TestConnectorConfigRefused(t *testing.T) {
	tgt, _ := devcluster.StartTestBroker(t)
	w := startWorker(t, tgt)
	for _, c := range []struct {
		name string
		set  map[string]string
		want string
	}{
		{"json", map[string]string{"value.converter": "org.apache.kafka.connect.json.JsonConverter"}, "MirrorMaker's records are bytes"},
		{"preserving", map[string]string{"samsa.offset.preserving.enabled": "true"}, "run it with samsa mirror"},
		{"policy", map[string]string{"replication.policy.class": "com.example.MyPolicy"}, "com.example.MyPolicy is not supported"},
		{"ciphers", map[string]string{"source.cluster.security.protocol": "SSL", "source.cluster.ssl.cipher.suites": "x"}, "source.cluster.ssl.cipher.suites: not supported"},
		{"ssl on plaintext", map[string]string{"target.cluster.ssl.truststore.location": "/x"}, "does not use TLS"},
		{"truststore", map[string]string{"source.cluster.security.protocol": "SSL", "source.cluster.ssl.truststore.location": "/nonexistent.jks"}, "no such file"},
		{"gssapi", map[string]string{"target.cluster.security.protocol": "SASL_PLAINTEXT"}, "GSSAPI is not supported"},
		{"jaas", map[string]string{"source.cluster.security.protocol": "SASL_PLAINTEXT", "source.cluster.sasl.mechanism": "PLAIN",
			"source.cluster.sasl.jaas.config": scramJAAS}, "the login module is org.apache.kafka.common.security.scram.ScramLoginModule"},
		{"client", map[string]string{"source.cluster.acks": "1"}, "source.producer.X"},
		{"unknown", map[string]string{"topics.exclud": "x"}, "unknown MirrorMaker setting"},
	} {
		cfg := connectorConfig(SourceClass, tgt, tgt)
		for k, v := range c.set {
			cfg[k] = v
		}
		code, body, err := w.Call("PUT", "/connectors/bad-"+c.name+"/config", cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if code != 400 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s; want 400 with %q", c.name, code, body, c.want)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

// TestExactlyOnceSource: on a worker with exactly.once.source.support
// enabled the source connector accepts exactly.once.support=required (its
// consumer reads committed records only), and an aborted transaction on
// the source never reaches the target.
func TestExactlyOnceSource(t *testing.T) {
	src, _ := devcluster.StartTestBroker(t)
	tgt, _ := devcluster.StartTestBroker(t)
	ctx := context.Background()
	if _, err := kadm.NewClient(client(t, src)).CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	txn := client(t, src, kgo.TransactionalID("app-txn"))
	for i, commit := range []bool{true, false, true} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			txn.Produce(ctx, &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "t%d-%d", i, j)}, nil)
		}
		if err := txn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	// The group app read everything (offset 11: after the last marker).
	if _, err := kadm.NewClient(client(t, src)).CommitOffsets(ctx, "app", kadm.Offsets{"orders": {0: {Topic: "orders", At: 11, LeaderEpoch: -1}}}); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, tgt, "exactly.once.source.support=enabled")
	cfg := connectorConfig(SourceClass, src, tgt)
	cfg["exactly.once.support"] = "required"
	createConnector(t, w, "mm2-source", cfg)
	createConnector(t, w, "mm2-checkpoint", connectorConfig(CheckpointClass, src, tgt))
	got := readTopic(t, tgt, "A.orders", func(rs []*kgo.Record) bool { return len(rs) >= 6 })
	time.Sleep(2 * time.Second)
	got = readTopic(t, tgt, "A.orders", func(rs []*kgo.Record) bool { return len(rs) >= len(got) })
	var vals []string
	for _, r := range got {
		vals = append(vals, string(r.Value))
	}
	if strings.Join(vals, ",") != "t0-0,t0-1,t0-2,t2-0,t2-1,t2-2" {
		t.Errorf("A.orders: %v", vals)
	}
	// Offset syncs follow the committed transactions (the runtime tells
	// the task of its records after the commit): the aborted records and
	// markers are a gap upstream, synced at once.
	readTopic(t, src, "mm2-offset-syncs.B.internal", func(rs []*kgo.Record) bool {
		for _, r := range rs {
			if s, err := mm2.DecodeOffsetSync(r.Key, r.Value); err == nil && s.UpstreamOffset == 8 && s.DownstreamOffset == 3 {
				return true
			}
		}
		return false
	})
	// The checkpoint task's records are transactional too: app's offset 11
	// is translated to the end of the mirrored records (6 of them, plus
	// the markers of the mirror's own transactions).
	readTopic(t, tgt, "A.checkpoints.internal", func(rs []*kgo.Record) bool {
		for _, r := range rs {
			if cp, err := mm2.DecodeCheckpoint(r.Key, r.Value); err == nil && cp.UpstreamOffset == 11 && cp.DownstreamOffset >= 6 {
				return true
			}
		}
		return false
	})
	for _, name := range []string{"mm2-source", "mm2-checkpoint"} {
		var st struct {
			Tasks []struct{ State, Trace string }
		}
		if _, _, err := w.Call("GET", "/connectors/"+name+"/status", nil, &st); err != nil {
			t.Fatal(err)
		}
		for _, tk := range st.Tasks {
			if tk.State != "RUNNING" {
				t.Errorf("%s task %s: %s", name, tk.State, tk.Trace)
			}
		}
	}
}

const scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`

var saslListenerRE = regexp.MustCompile(`SASL_PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)

// TestSASLSource mirrors from a source reached over SASL_PLAINTEXT with
// PLAIN, the credentials in source.cluster.sasl.jaas.config.
func TestSASLSource(t *testing.T) {
	src, serve := devcluster.StartTestBroker(t,
		"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
		"--override", `listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";`)
	m := saslListenerRE.FindStringSubmatch(serve.Tail())
	if m == nil {
		t.Fatalf("no SASL_PLAINTEXT listener in %s", serve.Tail())
	}
	tgt, _ := devcluster.StartTestBroker(t)
	ctx := context.Background()
	if _, err := kadm.NewClient(client(t, src)).CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := client(t, src).ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("secret")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, tgt)
	cfg := connectorConfig(SourceClass, m[1], tgt)
	cfg["source.cluster.security.protocol"] = "SASL_PLAINTEXT"
	cfg["source.cluster.sasl.mechanism"] = "PLAIN"
	cfg["source.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`
	createConnector(t, w, "mm2-source", cfg)
	got := readTopic(t, tgt, "A.orders", func(rs []*kgo.Record) bool { return len(rs) >= 1 })
	if string(got[0].Value) != "secret" {
		t.Errorf("A.orders: %q", got[0].Value)
	}
	// And the offset syncs went to the source over SASL too.
	readTopic(t, src, "mm2-offset-syncs.B.internal", func(rs []*kgo.Record) bool { return len(rs) >= 1 })
}

// TestTLSSource mirrors from a source reached over SSL, the broker's CA in
// a PEM trust store named by source.cluster.ssl.truststore.location.
func TestTLSSource(t *testing.T) {
	ca := keystoretest.NewCA(t)
	server := ca.Issue(t, keystoretest.Subject("broker"), nil, keystoretest.NewKey(t))
	dir := t.TempDir()
	serverPEM, caPEM := filepath.Join(dir, "broker.pem"), filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(serverPEM, append(append([]byte{}, server.KeyPEM...), server.CertPEM...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caPEM, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	src, serve := devcluster.StartTestBroker(t, "--listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"--override", "ssl.keystore.type=PEM", "--override", "ssl.keystore.location="+serverPEM)
	m := sslListenerRE.FindStringSubmatch(serve.Tail())
	if m == nil {
		t.Fatalf("no SSL listener in %s", serve.Tail())
	}
	tgt, _ := devcluster.StartTestBroker(t)
	ctx := context.Background()
	if _, err := kadm.NewClient(client(t, src)).CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := client(t, src).ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("over tls")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, tgt)
	cfg := connectorConfig(SourceClass, m[1], tgt)
	cfg["source.cluster.security.protocol"] = "SSL"
	cfg["source.cluster.ssl.truststore.type"] = "PEM"
	cfg["source.cluster.ssl.truststore.location"] = caPEM
	createConnector(t, w, "mm2-source", cfg)
	got := readTopic(t, tgt, "A.orders", func(rs []*kgo.Record) bool { return len(rs) >= 1 })
	if string(got[0].Value) != "over tls" {
		t.Errorf("A.orders: %q", got[0].Value)
	}
}

var sslListenerRE = regexp.MustCompile(`[ ,]SSL://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
