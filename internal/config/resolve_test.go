package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// syn builds a non-sensitive synonym for table tests.
func syn(name, value string, src Source) Synonym {
	return Synonym{Name: name, Value: ptr(value), Source: src}
}

func strp(d Description) string {
	if d.Value == nil {
		return "<nil>"
	}
	return *d.Value
}

func TestDescribeTopic(t *testing.T) {
	static := map[string]string{
		"log.retention.hours": "100",
		"log.segment.bytes":   "2097152",
		"min.insync.replicas": "2",
		"compression.type":    "lz4",
	}
	perBroker := map[string]string{"log.segment.bytes": "4194304"}
	clusterDefault := map[string]string{"log.segment.bytes": "3145728", "log.retention.ms": "5000", "min.insync.replicas": "3"}
	base := mustParse(t, Broker, static)
	broker, err := base.WithDynamic(perBroker, clusterDefault)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := ResolveTopic(broker, map[string]string{"compression.type": "zstd", "retention.ms": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		value    string
		source   Source
		synonyms []Synonym
	}{
		{"compression.type", "zstd", SourceDynamicTopic, []Synonym{
			syn("compression.type", "zstd", SourceDynamicTopic),
			syn("compression.type", "lz4", SourceStaticBroker),
			syn("compression.type", "producer", SourceDefault),
		}},
		{"segment.bytes", "4194304", SourceDynamicBroker, []Synonym{
			syn("log.segment.bytes", "4194304", SourceDynamicBroker),
			syn("log.segment.bytes", "3145728", SourceDynamicDefaultBroker),
			syn("log.segment.bytes", "2097152", SourceStaticBroker),
			syn("log.segment.bytes", "1073741824", SourceDefault),
		}},
		{"retention.ms", "1000", SourceDynamicTopic, []Synonym{
			syn("retention.ms", "1000", SourceDynamicTopic),
			syn("log.retention.ms", "5000", SourceDynamicDefaultBroker),
			syn("log.retention.hours", "100", SourceStaticBroker),
			syn("log.retention.hours", "168", SourceDefault),
		}},
		{"min.insync.replicas", "3", SourceDynamicDefaultBroker, []Synonym{
			syn("min.insync.replicas", "3", SourceDynamicDefaultBroker),
			syn("min.insync.replicas", "2", SourceStaticBroker),
			syn("min.insync.replicas", "1", SourceDefault),
		}},
		{"flush.ms", "9223372036854775807", SourceDefault, []Synonym{
			syn("log.flush.scheduler.interval.ms", "9223372036854775807", SourceDefault),
		}},
		{"remote.storage.enable", "false", SourceDefault, nil},
		{"cleanup.policy", "delete", SourceDefault, []Synonym{syn("log.cleanup.policy", "delete", SourceDefault)}},
		{"min.cleanable.dirty.ratio", "0.5", SourceDefault, []Synonym{syn("log.cleaner.min.cleanable.ratio", "0.5", SourceDefault)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := topic.Describe(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if strp(d) != tt.value || d.Source != tt.source || d.ReadOnly || d.Sensitive {
				t.Errorf("Describe(%s) = %s %s readOnly=%v sensitive=%v, want %s %s", tt.name, strp(d), d.Source, d.ReadOnly, d.Sensitive, tt.value, tt.source)
			}
			if diff := cmp.Diff(tt.synonyms, d.Synonyms); diff != "" {
				t.Errorf("synonyms (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDescribeTopicFromUnitSynonym: a value from log.retention.hours is reported as static,
// where Kafka's broker-side describe would say DEFAULT_CONFIG with no synonyms.
func TestDescribeTopicFromUnitSynonym(t *testing.T) {
	topic, err := ResolveTopic(mustParse(t, Broker, map[string]string{"log.retention.hours": "100"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := topic.Describe("retention.ms")
	want := []Synonym{syn("log.retention.hours", "100", SourceStaticBroker), syn("log.retention.hours", "168", SourceDefault)}
	if strp(d) != "360000000" || d.Source != SourceStaticBroker || !cmp.Equal(want, d.Synonyms) {
		t.Errorf("Describe(retention.ms) = %s %s %v", strp(d), d.Source, d.Synonyms)
	}
}

func TestDescribeBroker(t *testing.T) {
	v := mustParse(t, Broker, map[string]string{
		"log.retention.minutes":                        "10",
		"log.retention.hours":                          "1",
		"ssl.keystore.password":                        "secret",
		"listener.name.external.ssl.keystore.location": "/ext.jks",
		"ssl.keystore.location":                        "/base.jks",
		"log.cleanup.policy":                           "compact,delete",
	})
	v, err := v.WithDynamic(nil, map[string]string{"log.cleaner.min.compaction.lag.ms": "2"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		value    string
		source   Source
		readOnly bool
		synonyms []Synonym
	}{
		{"log.retention.ms", "600000", SourceStaticBroker, false, []Synonym{
			syn("log.retention.minutes", "10", SourceStaticBroker),
			syn("log.retention.hours", "1", SourceStaticBroker),
			syn("log.retention.hours", "168", SourceDefault),
		}},
		{"log.retention.hours", "1", SourceStaticBroker, true, []Synonym{
			syn("log.retention.hours", "1", SourceStaticBroker),
			syn("log.retention.hours", "168", SourceDefault),
		}},
		{"log.retention.minutes", "10", SourceStaticBroker, true, []Synonym{syn("log.retention.minutes", "10", SourceStaticBroker)}},
		{"log.cleaner.min.compaction.lag.ms", "2", SourceDynamicDefaultBroker, false, []Synonym{
			syn("log.cleaner.min.compaction.lag.ms", "2", SourceDynamicDefaultBroker),
			syn("log.cleaner.min.compaction.lag.ms", "0", SourceDefault),
		}},
		{"broker.rack", "<nil>", SourceDefault, true, nil},
		{"log.cleanup.policy", "compact,delete", SourceStaticBroker, false, []Synonym{
			syn("log.cleanup.policy", "compact,delete", SourceStaticBroker),
			syn("log.cleanup.policy", "delete", SourceDefault),
		}},
		{"listener.name.external.ssl.keystore.location", "/ext.jks", SourceStaticBroker, false, []Synonym{
			syn("listener.name.external.ssl.keystore.location", "/ext.jks", SourceStaticBroker),
			syn("ssl.keystore.location", "/base.jks", SourceStaticBroker),
		}},
		{"listener.name.internal.ssl.keystore.location", "/base.jks", SourceStaticBroker, false, []Synonym{
			syn("ssl.keystore.location", "/base.jks", SourceStaticBroker),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := v.Describe(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if strp(d) != tt.value || d.Source != tt.source || d.ReadOnly != tt.readOnly {
				t.Errorf("Describe = %s %s readOnly=%v, want %s %s %v", strp(d), d.Source, d.ReadOnly, tt.value, tt.source, tt.readOnly)
			}
			if diff := cmp.Diff(tt.synonyms, d.Synonyms); diff != "" {
				t.Errorf("synonyms (-want +got):\n%s", diff)
			}
		})
	}

	d, _ := v.Describe("ssl.keystore.password")
	want := []Synonym{{Name: "ssl.keystore.password", Source: SourceStaticBroker}}
	if d.Value != nil || !d.Sensitive || !cmp.Equal(want, d.Synonyms) {
		t.Errorf("password described as %v %v %v", d.Value, d.Sensitive, d.Synonyms)
	}
	if _, err := v.Describe("nope"); !errors.Is(err, ErrUnknownConfig) {
		t.Errorf("Describe(nope) = %v", err)
	}
}

func TestDescribeAll(t *testing.T) {
	v := mustParse(t, Broker, map[string]string{"listener.name.external.ssl.keystore.location": "/ext.jks"})
	all := v.DescribeAll()
	if len(all) != len(Broker.Entries())+1 {
		t.Fatalf("DescribeAll has %d entries, want %d", len(all), len(Broker.Entries())+1)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("not sorted at %s", all[i].Name)
		}
	}
	topic, _ := ResolveTopic(v, nil)
	if got := len(topic.DescribeAll()); got != len(kafkaTopicConfigs)+len(confluentTopicConfigs)+len(samsaTopicConfigs) {
		t.Errorf("topic DescribeAll has %d entries", got)
	}
}

func TestResolveTopic(t *testing.T) {
	broker := mustParse(t, Broker, map[string]string{"message.max.bytes": "2000000", "log.cleanup.policy": "compact"})
	tests := []struct {
		name      string
		overrides map[string]string
		check     func(t *testing.T, v Values)
		wantErr   error
	}{
		{"fallbacks", nil, func(t *testing.T, v Values) {
			if v.Int("max.message.bytes") != 2000000 || v.List("cleanup.policy")[0] != "compact" || v.Int("segment.bytes") != 1<<30 {
				t.Error("topic does not fall back to broker values")
			}
		}, nil},
		{"override wins", map[string]string{"max.message.bytes": "10", "cleanup.policy": ""}, func(t *testing.T, v Values) {
			if v.Int("max.message.bytes") != 10 || len(v.List("cleanup.policy")) != 0 {
				t.Error("override ignored")
			}
		}, nil},
		{"unknown override", map[string]string{"log.retention.ms": "1"}, nil, ErrUnknownConfig},
		{"bad override", map[string]string{"retention.ms": "-3"}, nil, ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ResolveTopic(broker, tt.overrides)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, v)
		})
	}
}

func TestResolveTopicWithoutBroker(t *testing.T) {
	v, err := ResolveTopic(Values{}, map[string]string{"segment.ms": "100"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Long("segment.ms") != 100 || v.Long("retention.ms") != 604800000 {
		t.Error("wrong values without broker")
	}
	d, _ := v.Describe("retention.ms")
	if d.Source != SourceDefault || len(d.Synonyms) != 0 {
		t.Errorf("retention.ms = %s %v", d.Source, d.Synonyms)
	}
}

func TestValidateDynamic(t *testing.T) {
	tests := []struct {
		name      string
		raw       map[string]string
		perBroker bool
		want      error
	}{
		{"cluster-wide as default", map[string]string{"log.retention.ms": "1"}, false, nil},
		{"cluster-wide per broker", map[string]string{"log.retention.ms": "1"}, true, nil},
		{"per-broker for one broker", map[string]string{"listeners": "PLAINTEXT://:9092"}, true, nil},
		{"per-broker as default", map[string]string{"listeners": "PLAINTEXT://:9092"}, false, ErrInvalidRequest},
		{"read-only", map[string]string{"log.retention.hours": "1"}, true, ErrInvalidRequest},
		{"read-only node id", map[string]string{"node.id": "2"}, true, ErrInvalidRequest},
		{"per-listener keystore", map[string]string{"listener.name.external.ssl.keystore.location": "/k"}, true, nil},
		{"unknown", map[string]string{"foo": "1"}, true, ErrUnknownConfig},
		{"bad value", map[string]string{"log.cleaner.threads": "-1"}, true, ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The update modes apply whether or not Samsa supports the config;
			// TestValidateDynamicNotSupported covers that part.
			err := Broker.validateDynamic(tt.raw, tt.perBroker, false)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("ValidateDynamic = %v, want %v", err, tt.want)
			}
		})
	}
	if err := Topic.ValidateDynamic(map[string]string{"segment.ms": "1"}, false); err != nil {
		t.Errorf("topic configs are all dynamic: %v", err)
	}
}

func TestWithDynamic(t *testing.T) {
	static := mustParse(t, Broker, map[string]string{"log.retention.ms": "100", "num.io.threads": "4"})
	v, err := static.WithDynamic(map[string]string{"num.io.threads": "6"}, map[string]string{"log.retention.ms": "200", "num.io.threads": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Long("log.retention.ms") != 200 || v.Int("num.io.threads") != 6 {
		t.Errorf("dynamic layers ignored: %d %d", v.Long("log.retention.ms"), v.Int("num.io.threads"))
	}
	if static.Long("log.retention.ms") != 100 {
		t.Error("WithDynamic changed its receiver")
	}
	// Replacing the dynamic layers drops configs no longer set.
	v2, err := v.WithDynamic(nil, nil)
	if err != nil || v2.Long("log.retention.ms") != 100 {
		t.Errorf("WithDynamic(nil, nil) = %d, %v", v2.Long("log.retention.ms"), err)
	}
	if _, err := static.WithDynamic(map[string]string{"log.roll.ms": "0"}, nil); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("dynamic broker value invalid for topics accepted: %v", err)
	}
	if _, err := static.WithDynamic(nil, map[string]string{"advertised.listeners": "PLAINTEXT://h:1"}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("per-broker config accepted as cluster default: %v", err)
	}
}

// node.id and broker.id stand for each other, as in Kafka's
// KafkaConfig.populateSynonyms: a KRaft node describes broker.id as its id.
func TestNodeIDBrokerIDSynonyms(t *testing.T) {
	for _, raw := range []map[string]string{{"node.id": "3"}, {"broker.id": "3"}, {"node.id": "3", "broker.id": "3"}} {
		v, err := Parse(Broker, raw)
		if err != nil {
			t.Fatalf("%v: %v", raw, err)
		}
		if v.Int("node.id") != 3 || v.Int("broker.id") != 3 {
			t.Errorf("%v: node.id %d broker.id %d, want 3 and 3", raw, v.Int("node.id"), v.Int("broker.id"))
		}
	}
	if _, err := Parse(Broker, map[string]string{"node.id": "3", "broker.id": "4"}); err == nil {
		t.Error("different node.id and broker.id accepted")
	}
}

// The internal topics' segment sizes are refused at startup below the
// smallest segment.bytes, instead of failing every coordinator lookup later.
func TestInternalTopicSegmentBytes(t *testing.T) {
	for _, name := range []string{"offsets.topic.segment.bytes", "transaction.state.log.segment.bytes"} {
		if _, err := Parse(Broker, map[string]string{name: "2048"}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=2048: %v, want an error naming it", name, err)
		}
		if _, err := Parse(Broker, map[string]string{name: "1048576"}); err != nil {
			t.Errorf("%s=1048576: %v", name, err)
		}
	}
}

func TestValidateDynamicNotSupported(t *testing.T) {
	tests := []struct {
		name string
		raw  map[string]string
		want error
	}{
		{"supported", map[string]string{"log.retention.ms": "1"}, nil},
		{"unsupported at its default", map[string]string{"principal.builder.class": "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"}, nil},
		{"unsupported", map[string]string{"principal.builder.class": "com.example.Builder"}, ErrNotSupported},
		{"unsupported per listener", map[string]string{"listener.name.external.principal.builder.class": "com.example.Builder"}, ErrNotSupported},
		{"read at startup only", map[string]string{"listeners": "PLAINTEXT://:9092"}, ErrNotSupported},
		{"no effect by design", map[string]string{"num.io.threads": "4"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Broker.ValidateDynamic(tt.raw, true)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("ValidateDynamic = %v, want %v", err, tt.want)
			}
		})
	}
	// Stored configs still resolve: a broker starts whatever an older Samsa accepted.
	static := mustParse(t, Broker, nil)
	if _, err := static.WithDynamic(map[string]string{"ssl.keystore.location": "/k", "listeners": "PLAINTEXT://:1"}, nil); err != nil {
		t.Errorf("WithDynamic refused stored configs: %v", err)
	}
}

// A config Samsa reads at startup only is reported read-only, although Kafka can change it.
func TestDescribeStartupOnlyReadOnly(t *testing.T) {
	v := mustParse(t, Broker, nil)
	for name, want := range map[string]bool{"log.cleaner.backoff.ms": true, "listeners": true, "log.retention.ms": false} {
		if d, _ := v.Describe(name); d.ReadOnly != want {
			t.Errorf("%s read-only = %v, want %v", name, d.ReadOnly, want)
		}
	}
}
