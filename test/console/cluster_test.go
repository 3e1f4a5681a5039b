package consoletest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/console"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/pkg/serde"
)

// platform is one samsa serve with its registry, Connect and console
// inside, and a second console whose users log in.
type platform struct {
	Broker, SASLBroker, Registry, Connect, Admin string
	// Console is the console without login (the operator's identity);
	// LoginConsole makes users log in with SCRAM-SHA-256 on the SASL
	// listener, where the cluster's ACLs apply to them.
	Console, LoginConsole string
	serve                 *devcluster.Serve
}

var (
	servingRE   = regexp.MustCompile(`msg="samsa serving".*`)
	plaintextRE = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	saslRE      = regexp.MustCompile(`SASL_PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	httpRE      = regexp.MustCompile(` http=([0-9.]+:[0-9]+)`)
	registryRE  = regexp.MustCompile(`msg="schema registry serving".* url=(\S+)`)
	connectRE   = regexp.MustCompile(`msg="connect worker serving".* url=(\S+)`)
	consoleRE   = regexp.MustCompile(`msg="console serving".* url=(\S+)`)
)

// The SCRAM user of the login console, and the one topic the cluster's
// ACLs let it see.
const (
	loginUser     = "alice"
	loginPassword = "alice-secret"
)

// startPlatform starts samsa serve on free loopback ports with the
// registry, Connect, the console and the admin HTTP listener inside it
// (each on a port the kernel picks, read from serve's log), a PLAINTEXT
// listener (whose anonymous user is a super user: the console without
// login, the registry, Connect and the seeding clients use it) and a
// SASL_PLAINTEXT one with SCRAM, under StandardAuthorizer; and the login
// console.
func startPlatform(t *testing.T) *platform {
	t.Helper()
	bin, err := devcluster.BuildOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	serve, found, err := devcluster.StartServe(ctx, bin, []string{
		"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(dir, "data"),
		"--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=SCRAM-SHA-256",
		"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "super.users=User:ANONYMOUS",
		"--override", "samsa.http.listener=127.0.0.1:0",
		"--override", "samsa.schema.registry.listener=127.0.0.1:0",
		"--override", "samsa.rest.listener=",
		"--override", "samsa.connect.listener=127.0.0.1:0",
		"--override", "samsa.connect.offset.flush.interval.ms=500",
		"--override", "samsa.console.listener=127.0.0.1:0",
		"--override", "samsa.console.sample.interval.ms=1000",
	}, servingRE, registryRE, connectRE, consoleRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Kill()
		if t.Failed() {
			t.Logf("samsa serve's log (last lines):\n%s", serve.Tail())
		}
	})
	p := &platform{serve: serve, Registry: found[1][1], Connect: found[2][1], Console: found[3][1]}
	m := plaintextRE.FindStringSubmatch(found[0][0])
	if m == nil {
		t.Fatalf("no PLAINTEXT listener in %q", found[0][0])
	}
	p.Broker = m[1]
	if m := saslRE.FindStringSubmatch(found[0][0]); m != nil {
		p.SASLBroker = m[1]
	} else {
		t.Fatalf("no SASL_PLAINTEXT listener in %q", found[0][0])
	}
	if m := httpRE.FindStringSubmatch(found[0][0]); m != nil {
		p.Admin = "http://" + m[1]
	}
	p.LoginConsole = startLoginConsole(t, p)
	return p
}

// startLoginConsole runs a second console, in this process on a free
// port, whose users log in with SCRAM-SHA-256 through the broker's
// SASL_PLAINTEXT listener (serve runs one console; this one is the same
// package configured as serve configures it with
// samsa.console.authentication.kafka.sasl.mechanism).
func startLoginConsole(t *testing.T, p *platform) string {
	t.Helper()
	cfg := console.Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(p.SASLBroker)}, RegistryURL: p.Registry, ConnectURL: p.Connect,
		LoginMechanism: "SCRAM-SHA-256"}
	if p.Admin != "" {
		cfg.AdminURLs = []string{p.Admin}
	}
	c, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("console: %v", err)
		}
		c.Close()
	})
	return "http://" + ln.Addr().String()
}

// seed is what the scripts find in the cluster, by name.
type seed struct {
	JSONTopic     string `json:"jsonTopic"`
	JSONRecords   int    `json:"jsonRecords"`
	AvroTopic     string `json:"avroTopic"`
	Subject       string `json:"subject"`
	EmptyTopic    string `json:"emptyTopic"`
	ClassicLag    string `json:"classicLagGroup"`
	ClassicLive   string `json:"classicLiveGroup"`
	RetiredGroup  string `json:"retiredGroup"` // offsets only: deleted in the browser
	ConsumerGroup string `json:"consumerGroup"`
	ShareGroup    string `json:"shareGroup"`
	Connector     string `json:"connector"`
	ConnectorFile string `json:"connectorFile"` // the file it reads
	LoginUser     string `json:"loginUser"`
	LoginPassword string `json:"loginPassword"`
	// What the action scripts make; the test checks each in the cluster.
	NewTopic     string `json:"newTopic"`
	NewConnector string `json:"newConnector"`
	NewSchema    string `json:"newSubject"`
	ACLUser      string `json:"aclUser"`
	SCRAMUser    string `json:"scramUser"`
}

// seedPlatform fills the cluster: a topic of JSON records over three
// partitions, one of Avro records in two schema versions (through the
// registry), an empty one; a classic group with committed offsets half
// way (lag, no members: its offsets can be reset), a live classic group,
// a live KIP-848 group and a share group; a running FileStreamSource
// connector. The live groups' clients run until the test ends.
func seedPlatform(t *testing.T, p *platform) seed {
	t.Helper()
	s := seed{JSONTopic: "orders", JSONRecords: 300, AvroTopic: "payments", Subject: "payments-value",
		EmptyTopic: "audit-log", ClassicLag: "billing", ClassicLive: "shipping", RetiredGroup: "retired", ConsumerGroup: "analytics",
		ShareGroup: "workers", Connector: "lines-source", LoginUser: loginUser, LoginPassword: loginPassword,
		NewTopic: "browser-made", NewConnector: "browser-source", NewSchema: "browser-made-value", ACLUser: "User:bob", SCRAMUser: "carol"}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Broker), kgo.DefaultProduceTopic(s.JSONTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	retention := "604800000"
	for _, tc := range []struct {
		name  string
		parts int32
		cfg   map[string]*string
	}{{s.JSONTopic, 3, nil}, {s.AvroTopic, 1, nil}, {s.EmptyTopic, 2, map[string]*string{"retention.ms": &retention}}} {
		if _, err := adm.CreateTopic(ctx, tc.parts, 1, tc.cfg, tc.name); err != nil {
			t.Fatalf("create %s: %v", tc.name, err)
		}
	}

	recs := make([]*kgo.Record, s.JSONRecords)
	for i := range recs {
		v, _ := json.Marshal(map[string]any{"id": i, "customer": fmt.Sprintf("c-%d", i%17), "amount": float64(i%50) + 0.5, "status": []string{"new", "paid", "shipped"}[i%3]})
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprintf("order-%d", i)), Value: v,
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("consoletest")}}}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Avro through the registry: ten records with version 1, ten with
	// version 2 (a field added with a default: backward compatible).
	rc, err := sr.NewClient(sr.URLs(p.Registry))
	if err != nil {
		t.Fatal(err)
	}
	sd := serde.New(rc)
	v1 := `{"type":"record","name":"Payment","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"}]}`
	v2 := `{"type":"record","name":"Payment","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"},{"name":"currency","type":"string","default":"EUR"}]}`
	var avro []*kgo.Record
	for ver, text := range []string{v1, v2} {
		enc, err := sd.ForTopic(ctx, s.AvroTopic, false, serde.Source{Type: serde.Avro, Text: text})
		if err != nil {
			t.Fatalf("schema version %d: %v", ver+1, err)
		}
		for i := range 10 {
			js := fmt.Sprintf(`{"id":%d,"amount":%d.25}`, ver*10+i, i)
			if ver == 1 {
				js = fmt.Sprintf(`{"id":%d,"amount":%d.25,"currency":"USD"}`, ver*10+i, i)
			}
			v, err := enc.EncodeJSON([]byte(js))
			if err != nil {
				t.Fatal(err)
			}
			avro = append(avro, &kgo.Record{Topic: s.AvroTopic, Key: []byte(fmt.Sprintf("pay-%d", ver*10+i)), Value: v})
		}
	}
	if err := cl.ProduceSync(ctx, avro...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The classic group with lag: half of each partition committed.
	ends, err := adm.ListEndOffsets(ctx, s.JSONTopic)
	if err != nil {
		t.Fatal(err)
	}
	var commit kadm.Offsets
	ends.Each(func(o kadm.ListedOffset) {
		commit.AddOffset(o.Topic, o.Partition, o.Offset/2, -1)
	})
	for _, g := range []string{s.ClassicLag, s.RetiredGroup} {
		if r, err := adm.CommitOffsets(ctx, g, commit); err != nil || r.Error() != nil {
			t.Fatalf("commit %s: %v %v", g, err, r.Error())
		}
	}

	// The login console's user: SCRAM credentials, and ACLs that let it
	// see the JSON topic only.
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: loginUser, Mechanism: kadm.ScramSha256,
		Iterations: 8192, Password: loginPassword}}); err != nil {
		t.Fatalf("SCRAM user %s: %v", loginUser, err)
	}
	acls := kadm.NewACLs().Allow("User:"+loginUser).Topics(s.JSONTopic).Operations(kadm.OpDescribe, kadm.OpRead).
		ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := adm.CreateACLs(ctx, acls); err != nil || res[0].Err != nil {
		t.Fatalf("ACLs of %s: %v %v", loginUser, err, res)
	}

	// Live groups: a classic consumer, a KIP-848 consumer and a share
	// consumer, each polling until the test ends.
	live := func(name string, opts ...kgo.Opt) {
		c, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(p.Broker), kgo.ConsumeTopics(s.JSONTopic),
			kgo.ClientID("consoletest-" + name)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		pctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for pctx.Err() == nil {
				fs := c.PollFetches(pctx)
				fs.EachRecord(func(r *kgo.Record) { r.Ack(kgo.AckAccept) })
			}
		}()
		t.Cleanup(func() { stop(); <-done; c.Close() })
	}
	live(s.ClassicLive, kgo.ConsumerGroup(s.ClassicLive), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	live(s.ConsumerGroup, kgo.ConsumerGroup(s.ConsumerGroup), kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	live(s.ShareGroup, kgo.ShareGroup(s.ShareGroup))

	// A running connector of a built-in plugin.
	in := filepath.Join(t.TempDir(), "lines.txt")
	s.ConnectorFile = in
	if err := os.WriteFile(in, []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"name": s.Connector, "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "lines", "tasks.max": "1"}})
	hc := &http.Client{Timeout: 20 * time.Second}
	for {
		resp, err := hc.Post(p.Connect+"/connectors", "application/json", strings.NewReader(string(body)))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("create connector %s: %v (status %v)", s.Connector, err, resp)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Wait until the groups and the connector are what the pages show.
	for {
		groups, err := adm.DescribeGroups(ctx, s.ClassicLive)
		running := connectorRunning(hc, p.Connect, s.Connector)
		if err == nil && len(groups[s.ClassicLive].Members) > 0 && running {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the seeded groups or connector did not come up: %v (connector running: %v)", err, running)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return s
}

func connectorRunning(hc *http.Client, base, name string) bool {
	resp, err := hc.Get(base + "/connectors/" + name + "/status")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st struct {
		Connector struct{ State string }   `json:"connector"`
		Tasks     []struct{ State string } `json:"tasks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return false
	}
	return st.Connector.State == "RUNNING" && len(st.Tasks) > 0 && st.Tasks[0].State == "RUNNING"
}
