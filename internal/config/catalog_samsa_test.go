package config

import (
	"errors"
	"strings"
	"testing"
)

// Samsa's own configs are named under samsa., and only they are: a name
// of Kafka's must not be taken for one of Samsa's, nor the reverse.
func TestSamsaOwnConfigs(t *testing.T) {
	own := 0
	for _, e := range Broker.Entries() {
		if e.SamsaOwn() {
			own++
		}
		if strings.HasPrefix(e.Name, "samsa") != e.SamsaOwn() {
			t.Errorf("%s: SamsaOwn %v", e.Name, e.SamsaOwn())
		}
	}
	if own == 0 {
		t.Error("no config is Samsa's own")
	}
	e, _ := Broker.Lookup("samsa.http.listener")
	if e == nil || e.DefaultValue != "127.0.0.1:9644" || e.Mode != ReadOnly {
		t.Fatalf("samsa.http.listener: %+v", e)
	}
	if !strings.Contains(Broker.Markdown(), "Samsa's own; Kafka has no such config.") {
		t.Error("the reference does not say which configs are Samsa's own")
	}
}

func TestHostPortValidator(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"", true}, {"127.0.0.1:9644", true}, {"localhost:0", true}, {"[::1]:9644", true}, {":9644", true},
		{"9644", false}, {"127.0.0.1:", false}, {"127.0.0.1:65536", false}, {"127.0.0.1:http", false},
	} {
		if err := (hostPort{}).Validate(c.v); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.v, err, c.ok)
		}
	}
}

// The balancer's configs are read by the active controller from the
// cluster default, so a per-broker value is refused; the draining flag is
// the reverse: per broker, dynamic only, refused in server.properties.
func TestBalancerConfigModes(t *testing.T) {
	if err := Broker.ValidateDynamic(map[string]string{"samsa.balancer.enable": "true"}, false); err != nil {
		t.Errorf("at the cluster default: %v", err)
	}
	if err := Broker.ValidateDynamic(map[string]string{"samsa.balancer.enable": "true"}, true); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("for one broker: %v, want INVALID_REQUEST", err)
	}
	if err := Broker.ValidateDynamic(map[string]string{"samsa.broker.draining": "true"}, true); err != nil {
		t.Errorf("draining for one broker: %v", err)
	}
	if err := Broker.ValidateDynamic(map[string]string{"samsa.broker.draining": "true"}, false); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("draining at the cluster default: %v, want INVALID_REQUEST", err)
	}
	if _, err := Parse(Broker, map[string]string{"samsa.broker.draining": "true"}); !errors.Is(err, ErrInvalidValue) ||
		!strings.Contains(err.Error(), "--entity-name") {
		t.Errorf("draining in server.properties: %v, want a refusal saying how to set it", err)
	}
	if _, err := Parse(Broker, map[string]string{"samsa.balancer.enable": "true", "samsa.balancer.bytes.spread": "1.5"}); err != nil {
		t.Errorf("balancer configs in server.properties: %v", err)
	}
	if _, err := Parse(Broker, map[string]string{"samsa.balancer.bytes.spread": "-0.1"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("negative bytes spread: %v", err)
	}
	// Stored values resolve whatever their level (WithDynamic does not
	// refuse what the image holds).
	v, _ := Parse(Broker, nil)
	if _, err := v.WithDynamic(map[string]string{"samsa.balancer.enable": "true"}, nil); err != nil {
		t.Errorf("resolving a stored per-broker value: %v", err)
	}
}

// Confluent Server's schema validation configs take Confluent's values
// (the serializers' class names) and Redpanda's short names, and nothing
// else.
func TestConfluentSchemaValidationConfigs(t *testing.T) {
	for _, c := range []struct {
		name, value string
		ok          bool
	}{
		{"confluent.value.schema.validation", "true", true},
		{"confluent.key.schema.validation", "yes", false},
		{"confluent.value.subject.name.strategy", "io.confluent.kafka.serializers.subject.RecordNameStrategy", true},
		{"confluent.key.subject.name.strategy", "TopicRecordNameStrategy", true},
		{"confluent.key.subject.name.strategy", "io.confluent.kafka.serializers.subject.Other", false},
		{"confluent.value.subject.name.strategy", "topicnamestrategy", false},
	} {
		_, err := ResolveTopic(mustParse(t, Broker, nil), map[string]string{c.name: c.value})
		if (err == nil) != c.ok {
			t.Errorf("%s=%s: %v, want ok=%v", c.name, c.value, err, c.ok)
		}
	}
	v, err := ResolveTopic(mustParse(t, Broker, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := SubjectNameStrategy(v.String("confluent.value.subject.name.strategy")); got != TopicNameStrategy {
		t.Errorf("default strategy %q", got)
	}
	if !strings.Contains(Topic.Markdown(), "Confluent Server's; Apache Kafka has no such config.") {
		t.Error("the reference does not say which configs are Confluent's")
	}
	if _, err := Parse(Broker, map[string]string{"confluent.schema.registry.url": "http://127.0.0.1:8081"}); err != nil {
		t.Errorf("confluent.schema.registry.url: %v", err)
	}
}

// samsa.mirror.source is a string topic config, empty by default (an
// ordinary topic), with no server default, marked as Samsa's own.
func TestMirrorSourceConfig(t *testing.T) {
	e, ok := Topic.Lookup(MirrorSourceConfig)
	if !ok || e.DefaultValue != "" || e.ServerDefault != "" || !e.SamsaOwn() || e.Wired == "" {
		t.Fatalf("%s: %+v", MirrorSourceConfig, e)
	}
	v, err := ResolveTopic(mustParse(t, Broker, nil), map[string]string{MirrorSourceConfig: "east"})
	if err != nil || v.String(MirrorSourceConfig) != "east" {
		t.Fatalf("resolve: %v %q", err, v.String(MirrorSourceConfig))
	}
	if !strings.Contains(Topic.Markdown(), "| `samsa.mirror.source` | string |") {
		t.Error("the topic reference does not list samsa.mirror.source")
	}
}
