package broker

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Configs Samsa does not support yet are refused wherever a user sets them,
// never accepted and ignored; their defaults are accepted.

func writeServerProperties(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUnsupportedConfigRefusedAtStartup(t *testing.T) {
	path := writeServerProperties(t, "log.dirs="+t.TempDir()+"\nprincipal.builder.class=com.example.Builder\n")
	_, err := LoadConfig(path, nil)
	if !errors.Is(err, config.ErrNotSupported) ||
		!strings.Contains(err.Error(), "principal.builder.class: value com.example.Builder is not supported yet (Samsa cannot load Java classes") {
		t.Errorf("server.properties: %v", err)
	}
	_, err = LoadConfig("", map[string]string{"num.replica.fetchers": "2"})
	if !errors.Is(err, config.ErrNotSupported) || !strings.Contains(err.Error(), "num.replica.fetchers") || !strings.Contains(err.Error(), "issue 12") {
		t.Errorf("--override: %v", err)
	}
	// The same configs at their defaults are fine.
	if _, err := LoadConfig("", map[string]string{"replica.lag.time.max.ms": "30000", "ssl.keystore.type": "JKS"}); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

// Kafka's own server.properties sets several configs Samsa does not
// implement, to their defaults or to what a single node lives with; a
// broker must start from it. It also sets controller.quorum.bootstrap.servers,
// so, as with Kafka's quickstart, the directories are formatted first
// (kafka-storage.sh format -t "$(kafka-storage.sh random-uuid)" -c ...).
func TestKafkaServerPropertiesStart(t *testing.T) {
	body, err := os.ReadFile("testdata/kafka-server.properties")
	if err != nil {
		t.Fatal(err)
	}
	client, controller := freePort(t), freePort(t)
	s := strings.NewReplacer(":9092", ":"+client, ":9093", ":"+controller, "/tmp/kraft-combined-logs", t.TempDir()).Replace(string(body))
	s = strings.ReplaceAll(s, "://:", "://127.0.0.1:")
	v, err := LoadConfig(writeServerProperties(t, s), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = quiet
	if _, err := New(cfg); !errors.Is(err, metaprops.ErrNotFormatted) {
		t.Fatalf("start before format: %v", err)
	}
	id, err := metaprops.NewClusterID()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FormatStorage(v, FormatOptions{ClusterID: id, Standalone: true, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	cl := newFranz(t, net.JoinHostPort("127.0.0.1", client), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a loopback port nothing listens on, outside the
// kernel's ephemeral range (internal/freeport), for configs that must name
// their ports before the broker binds them.
func freePort(t testing.TB) string {
	t.Helper()
	p, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(p)
}

// wantNotSupported checks an alter or create answer: INVALID_CONFIG with a
// message that names the config and says what brings it.
func wantNotSupported(t *testing.T, what string, err error, msg string, name, by string) {
	t.Helper()
	if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(msg, name) || !strings.Contains(msg, "not supported yet") || !strings.Contains(msg, by) {
		t.Errorf("%s: %v %q, want INVALID_CONFIG naming %s, \"not supported yet\" and %q", what, err, msg, name, by)
	}
}

func TestUnsupportedTopicConfigRefused(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"remote.storage.enable": kadm.StringPtr("true")}, "tiered")
	if err == nil {
		err = resp.Err
	}
	wantNotSupported(t, "CreateTopics", err, resp.ErrMessage, "remote.storage.enable", "tiered storage is not planned")
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"remote.storage.enable": kadm.StringPtr("false"), "preallocate": kadm.StringPtr("false")}, "plain"); err != nil {
		t.Fatalf("unsupported configs at their defaults: %v", err)
	}

	set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "preallocate", Value: kadm.StringPtr("true")}}
	rs, err := adm.AlterTopicConfigs(ctx, set, "plain")
	if err != nil {
		t.Fatal(err)
	}
	wantNotSupported(t, "IncrementalAlterConfigs", rs[0].Err, rs[0].ErrMessage, "preallocate", "preallocating segment files is not planned")
	rs, err = adm.AlterTopicConfigsState(ctx, set, "plain")
	if err != nil {
		t.Fatal(err)
	}
	wantNotSupported(t, "AlterConfigs", rs[0].Err, rs[0].ErrMessage, "preallocate", "preallocating segment files is not planned")
	if got := describedTopicConfig(t, adm, ctx, "plain", "preallocate"); got.MaybeValue() != "false" {
		t.Errorf("refused alter changed the topic: %s", got.MaybeValue())
	}
}

func TestUnsupportedBrokerConfigRefused(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	node := b.cfg.NodeID
	for _, tt := range []struct {
		name, value, by string
		brokers         []int32
	}{
		{"listener.name.plaintext.principal.builder.class", "com.example.Builder", "Samsa cannot load Java classes", []int32{node}},
		{"log.local.retention.ms", "1000", "tiered storage is not planned", nil},
		{"listeners", "PLAINTEXT://127.0.0.1:1", "Samsa reads it at startup only", []int32{node}},
		{"log.cleaner.backoff.ms", "1000", "Samsa reads it at startup only", nil},
	} {
		set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: tt.name, Value: kadm.StringPtr(tt.value)}}
		rs, err := adm.AlterBrokerConfigs(ctx, set, tt.brokers...)
		if err != nil {
			t.Fatal(err)
		}
		wantNotSupported(t, "IncrementalAlterConfigs "+tt.name, rs[0].Err, rs[0].ErrMessage, tt.name, tt.by)
		rs, err = adm.AlterBrokerConfigsState(ctx, set, tt.brokers...)
		if err != nil {
			t.Fatal(err)
		}
		wantNotSupported(t, "AlterConfigs "+tt.name, rs[0].Err, rs[0].ErrMessage, tt.name, tt.by)
	}
	// A supported dynamic config still changes.
	set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kadm.StringPtr("1000")}}
	if rs, err := adm.AlterBrokerConfigs(ctx, set); err != nil || rs[0].Err != nil {
		t.Fatalf("supported config: %v %v", err, rs)
	}
}

// logRecorder keeps the messages logged at WARN and above.
type logRecorder struct {
	mu    sync.Mutex
	warns []string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *logRecorder) WithGroup(string) slog.Handler                { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warns = append(r.warns, rec.Message)
	return nil
}

func (r *logRecorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warns)
}

// A config accepted with no effect is said so at startup, once.
func TestNoEffectWarnedAtStartup(t *testing.T) {
	v, err := config.Parse(config.Broker, map[string]string{"num.io.threads": "16", "num.network.threads": "3"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &logRecorder{}
	startBrokerWith(t, Config{LogDir: t.TempDir(), Values: v, Logger: slog.New(rec)})
	want := []string{
		"num.io.threads=16 has no effect in Samsa: Samsa has no request handler pool: each connection's requests run on that connection's goroutine",
		"num.network.threads=3 has no effect in Samsa: each connection has its own reader and writer goroutines; there are no network threads to size",
	}
	var got []string
	for _, m := range rec.messages() {
		if strings.Contains(m, "has no effect") {
			got = append(got, m)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
}

// Several log.dirs are served (JBOD); one named twice is refused.
func TestSeveralLogDirs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	v, err := LoadConfig("", map[string]string{"log.dirs": a + "," + b})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFromValues(v)
	if err != nil || !slices.Equal(cfg.LogDirs, []string{a, b}) || cfg.LogDir != a {
		t.Fatalf("two log.dirs: %v %v", cfg.LogDirs, err)
	}
	v, err = LoadConfig("", map[string]string{"log.dirs": a + "," + b + "," + a + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigFromValues(v); err == nil || !strings.Contains(err.Error(), "names "+a+"/ twice") {
		t.Errorf("a log dir twice: %v", err)
	}
}
