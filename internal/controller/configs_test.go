package controller

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
)

func checkAlter(t *testing.T, res []AlterConfigsResult, want ...int16) {
	t.Helper()
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		if r.ErrorCode != want[i] {
			t.Errorf("%s %q: got %d %s, want %d", r.Type, r.Name, r.ErrorCode, r.ErrorMessage, want[i])
		}
	}
}

func op(name string, o config.OpType, value *string) config.AlterOp {
	return config.AlterOp{Name: name, Op: o, Value: value}
}

func TestIncrementalAlterTopicConfigs(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, "orders", 1)
	topic := func(ops ...config.AlterOp) []IncrementalAlterConfigsResource {
		return []IncrementalAlterConfigsResource{{Type: metadata.ResourceTopic, Name: "orders", Ops: ops}}
	}
	steps := []struct {
		name string
		ops  []config.AlterOp
		code int16
		want map[string]string
	}{
		{"set", []config.AlterOp{op("retention.ms", config.OpSet, sp("1000")), op("cleanup.policy", config.OpSet, sp("delete"))}, 0,
			map[string]string{"retention.ms": "1000", "cleanup.policy": "delete"}},
		{"append", []config.AlterOp{op("cleanup.policy", config.OpAppend, sp("compact"))}, 0,
			map[string]string{"retention.ms": "1000", "cleanup.policy": "delete,compact"}},
		{"subtract", []config.AlterOp{op("cleanup.policy", config.OpSubtract, sp("delete"))}, 0,
			map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}},
		{"delete", []config.AlterOp{op("retention.ms", config.OpDelete, nil)}, 0,
			map[string]string{"cleanup.policy": "compact"}},
		{"append to non-list", []config.AlterOp{op("retention.ms", config.OpAppend, sp("1"))}, kerr.InvalidConfig.Code,
			map[string]string{"cleanup.policy": "compact"}},
		{"bad value", []config.AlterOp{op("retention.ms", config.OpSet, sp("soon"))}, kerr.InvalidConfig.Code,
			map[string]string{"cleanup.policy": "compact"}},
		{"unknown name", []config.AlterOp{op("retention.hours", config.OpSet, sp("1"))}, kerr.InvalidConfig.Code,
			map[string]string{"cleanup.policy": "compact"}},
		{"null set", []config.AlterOp{op("retention.ms", config.OpSet, nil)}, kerr.InvalidRequest.Code,
			map[string]string{"cleanup.policy": "compact"}},
		{"duplicate key", []config.AlterOp{op("retention.ms", config.OpSet, sp("1")), op("retention.ms", config.OpDelete, nil)}, kerr.InvalidRequest.Code,
			map[string]string{"cleanup.policy": "compact"}},
		{"delete absent", []config.AlterOp{op("segment.ms", config.OpDelete, nil)}, 0,
			map[string]string{"cleanup.policy": "compact"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			// Validate-only first: same answer, nothing changes.
			before := c.Image()
			checkAlter(t, c.IncrementalAlterConfigs(ctx(t), topic(s.ops...), true), s.code)
			if c.Image() != before {
				t.Fatal("validate only changed the image")
			}
			checkAlter(t, c.IncrementalAlterConfigs(ctx(t), topic(s.ops...), false), s.code)
			if got := c.Image().TopicConfig("orders"); !maps.Equal(got, s.want) {
				t.Errorf("configs %v, want %v", got, s.want)
			}
		})
	}
}

func TestLegacyAlterConfigsReplaces(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, "orders", 1)
	res := c.AlterConfigs(ctx(t), []AlterConfigsResource{{Type: metadata.ResourceTopic, Name: "orders",
		Configs: map[string]*string{"retention.ms": sp("5"), "segment.ms": sp("100")}}}, false)
	checkAlter(t, res, 0)
	res = c.AlterConfigs(ctx(t), []AlterConfigsResource{{Type: metadata.ResourceTopic, Name: "orders",
		Configs: map[string]*string{"segment.ms": sp("200")}}}, false)
	checkAlter(t, res, 0)
	if got := c.Image().TopicConfig("orders"); !maps.Equal(got, map[string]string{"segment.ms": "200"}) {
		t.Errorf("full replace left %v", got)
	}
	before := c.Image()
	res = c.AlterConfigs(ctx(t), []AlterConfigsResource{
		{Type: metadata.ResourceTopic, Name: "orders", Configs: map[string]*string{"segment.ms": nil}},
		{Type: metadata.ResourceTopic, Name: "missing", Configs: map[string]*string{}},
		{Type: metadata.ResourceTopic, Name: "orders", Configs: map[string]*string{}},
	}, false)
	checkAlter(t, res, kerr.InvalidRequest.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidRequest.Code)
	if c.Image() != before {
		t.Error("refused alters changed the image")
	}
	res = c.AlterConfigs(ctx(t), []AlterConfigsResource{{Type: metadata.ResourceTopic, Name: "orders",
		Configs: map[string]*string{"retention.ms": sp("1")}}}, true)
	checkAlter(t, res, 0)
	if c.Image() != before {
		t.Error("validate only changed the image")
	}
}

func TestAlterBrokerConfigs(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	broker := func(name string, ops ...config.AlterOp) IncrementalAlterConfigsResource {
		return IncrementalAlterConfigsResource{Type: metadata.ResourceBroker, Name: name, Ops: ops}
	}
	res := c.IncrementalAlterConfigs(ctx(t), []IncrementalAlterConfigsResource{
		broker("", op("log.retention.ms", config.OpSet, sp("60000"))),
		broker("1", op("log.cleaner.min.compaction.lag.ms", config.OpSet, sp("2"))),
		broker("2", op("num.io.threads", config.OpSet, sp("4"))),
	}, false)
	checkAlter(t, res, 0, 0, 0)
	img := c.Image()
	if got := img.BrokerConfig(""); got["log.retention.ms"] != "60000" {
		t.Errorf("cluster default %v", got)
	}
	if got := img.BrokerConfig("1"); got["log.cleaner.min.compaction.lag.ms"] != "2" {
		t.Errorf("broker 1 %v", got)
	}

	// A new topic falls back to the dynamic cluster default.
	created := mustCreate(t, c, "fallback", 1)
	for _, d := range created.Configs {
		if d.Name == "retention.ms" && (d.Value == nil || *d.Value != "60000" || d.Source != config.SourceDynamicDefaultBroker) {
			t.Errorf("retention.ms = %+v", d)
		}
	}

	before := c.Image()
	res = c.IncrementalAlterConfigs(ctx(t), []IncrementalAlterConfigsResource{
		broker("1", op("node.id", config.OpSet, sp("3"))),                              // read-only
		broker("", op("listeners", config.OpSet, sp("PLAINTEXT://:1"))),                // per-broker only
		broker("one", op("log.cleaner.min.compaction.lag.ms", config.OpSet, sp("2"))),  // not a node id
		broker("2", op("log.cleaner.min.compaction.lag.ms", config.OpSet, sp("zero"))), // bad value
		{Type: 8, Name: "1", Ops: []config.AlterOp{op("x", config.OpSet, sp("1"))}},    // broker logger
	}, false)
	checkAlter(t, res, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidConfig.Code, kerr.InvalidRequest.Code)
	if c.Image() != before {
		t.Error("refused broker alters changed the image")
	}
	if !strings.Contains(res[0].ErrorMessage, "read-only") {
		t.Errorf("read-only message %q", res[0].ErrorMessage)
	}

	// Legacy AlterConfigs on a broker replaces its set too.
	legacy := c.AlterConfigs(ctx(t), []AlterConfigsResource{{Type: metadata.ResourceBroker, Name: "1",
		Configs: map[string]*string{"log.cleaner.min.compaction.lag.ms": sp("3")}}}, false)
	checkAlter(t, legacy, 0)
	if got := c.Image().BrokerConfig("1"); !maps.Equal(got, map[string]string{"log.cleaner.min.compaction.lag.ms": "3"}) {
		t.Errorf("broker 1 after replace %v", got)
	}
}

// Client metrics subscriptions (KIP-714) are config resources of their own:
// checked as Kafka's ClientMetricsConfigs does, committed to the metadata,
// and gone when their last config is.
func TestAlterClientMetricsSubscriptions(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	sub := func(name string, ops ...config.AlterOp) []IncrementalAlterConfigsResource {
		return []IncrementalAlterConfigsResource{{Type: metadata.ResourceClientMetrics, Name: name, Ops: ops}}
	}
	checkAlter(t, c.IncrementalAlterConfigs(ctx(t), sub("producers",
		op("metrics", config.OpSet, sp("org.apache.kafka.producer.")), op("interval.ms", config.OpSet, sp("1000"))), false), 0)
	checkAlter(t, c.IncrementalAlterConfigs(ctx(t), sub("producers", op("metrics", config.OpAppend, sp("org.apache.kafka.consumer."))), false), 0)
	want := map[string]string{"metrics": "org.apache.kafka.producer.,org.apache.kafka.consumer.", "interval.ms": "1000"}
	if got := c.Image().ClientMetricsConfig("producers"); !maps.Equal(got, want) {
		t.Fatalf("configs %v, want %v", got, want)
	}
	before := c.Image()
	for _, f := range []struct {
		name string
		res  []IncrementalAlterConfigsResource
		code int16
		says string
	}{
		{"empty name", sub("", op("metrics", config.OpSet, sp("*"))), kerr.InvalidRequest.Code, "Subscription name can't be empty"},
		{"unknown config", sub("producers", op("metric", config.OpSet, sp("*"))), kerr.InvalidRequest.Code, "unknown client metrics configuration"},
		{"interval too short", sub("producers", op("interval.ms", config.OpSet, sp("50"))), kerr.InvalidRequest.Code, "between 100 and 3600000"},
		{"interval not a number", sub("producers", op("interval.ms", config.OpSet, sp("1s"))), kerr.InvalidConfig.Code, "INT"},
		{"bad pattern", sub("producers", op("match", config.OpSet, sp("client_id=("))), kerr.InvalidConfig.Code, "not a valid regular expression"},
		{"unknown attribute", sub("producers", op("match", config.OpSet, sp("host=a"))), kerr.InvalidConfig.Code, "illegal client matching pattern"},
	} {
		res := c.IncrementalAlterConfigs(ctx(t), f.res, false)
		checkAlter(t, res, f.code)
		if !strings.Contains(res[0].ErrorMessage, f.says) {
			t.Errorf("%s: message %q does not say %q", f.name, res[0].ErrorMessage, f.says)
		}
	}
	if c.Image() != before {
		t.Fatal("refused alters changed the image")
	}
	// The legacy API replaces the set: what it leaves out goes.
	checkAlter(t, c.AlterConfigs(ctx(t), []AlterConfigsResource{{Type: metadata.ResourceClientMetrics, Name: "producers",
		Configs: map[string]*string{"metrics": sp("*")}}}, false), 0)
	if got := c.Image().ClientMetricsConfig("producers"); !maps.Equal(got, map[string]string{"metrics": "*"}) {
		t.Fatalf("after AlterConfigs: %v", got)
	}
	checkAlter(t, c.IncrementalAlterConfigs(ctx(t), sub("producers", op("metrics", config.OpDelete, nil)), false), 0)
	if got := c.Image().ClientMetricsSubscriptions(); len(got) != 0 {
		t.Fatalf("every config deleted, the subscription is still there: %v", got)
	}
}
