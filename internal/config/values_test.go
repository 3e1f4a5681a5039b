package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mustParse builds values without CheckSupported: the tests of resolution, describing
// and per-listener names use any catalog config, supported by Samsa or not.
func mustParse(t *testing.T, c *Catalog, raw map[string]string) Values {
	t.Helper()
	if err := c.Validate(raw); err != nil {
		t.Fatalf("Validate(%v): %v", raw, err)
	}
	v, err := parseValid(c, raw)
	if err != nil {
		t.Fatalf("Parse(%v): %v", raw, err)
	}
	return v
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		c       *Catalog
		raw     map[string]string
		markers []error
		wantMsg []string
	}{
		{"unknown broker config", Broker, map[string]string{"zookeeper.connect": "zk:2181"},
			[]error{ErrUnknownConfig}, []string{"config: unknown config zookeeper.connect"}},
		{"topic name on broker", Broker, map[string]string{"retention.ms": "1"},
			[]error{ErrUnknownConfig}, []string{"retention.ms"}},
		{"bad int", Broker, map[string]string{"num.partitions": "many"},
			[]error{ErrInvalidValue}, []string{"config: invalid value many for configuration num.partitions: not a number of type INT"}},
		{"below minimum", Topic, map[string]string{"segment.bytes": "1000"},
			[]error{ErrInvalidValue}, []string{"invalid value 1000 for configuration segment.bytes: value must be at least 1048576"}},
		{"not one of", Topic, map[string]string{"compression.type": "brotli"},
			[]error{ErrInvalidValue}, []string{"compression.type"}},
		{"all problems reported", Topic, map[string]string{"retention.ms": "-2", "nope": "1", "cleanup.policy": "x"},
			[]error{ErrInvalidValue, ErrUnknownConfig}, []string{"retention.ms", "nope", "cleanup.policy"}},
		{"node.id differs from broker.id", Broker, map[string]string{"node.id": "1", "broker.id": "2"},
			[]error{ErrInvalidValue}, []string{"broker.id", "same value"}},
		{"broker value bad for topic", Broker, map[string]string{"log.roll.ms": "0"},
			[]error{ErrInvalidValue}, []string{"segment.ms", "from broker config log.roll.ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.c, tt.raw)
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, m := range tt.markers {
				if !errors.Is(err, m) {
					t.Errorf("error %v does not wrap %v", err, m)
				}
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

func TestErrorNamesConfig(t *testing.T) {
	_, err := Parse(Topic, map[string]string{"min.insync.replicas": "0"})
	var ce *Error
	if !errors.As(err, &ce) || ce.Name != "min.insync.replicas" || ce.Value != "0" {
		t.Fatalf("error %v: want *Error naming min.insync.replicas=0", err)
	}
}

func TestGetters(t *testing.T) {
	v := mustParse(t, Broker, map[string]string{
		"node.id":                          " 3 ",
		"broker.id":                        "3",
		"auto.create.topics.enable":        "FALSE",
		"log.cleanup.policy":               "compact , delete",
		"log.cleaner.min.cleanable.ratio":  "0.25",
		"broker.rack":                      "r1",
		"offsets.topic.replication.factor": "1",
		"ssl.keystore.password":            "pw",
	})
	if got := v.Int("node.id"); got != 3 {
		t.Errorf("node.id = %d", got)
	}
	if v.Bool("auto.create.topics.enable") {
		t.Error("auto.create.topics.enable = true")
	}
	if diff := cmp.Diff([]string{"compact", "delete"}, v.List("log.cleanup.policy")); diff != "" {
		t.Errorf("log.cleanup.policy: %s", diff)
	}
	if got := v.Double("log.cleaner.min.cleanable.ratio"); got != 0.25 {
		t.Errorf("ratio = %v", got)
	}
	if got := v.String("broker.rack"); got != "r1" {
		t.Errorf("broker.rack = %q", got)
	}
	if got := v.Int("offsets.topic.replication.factor"); got != 1 {
		t.Errorf("short via Int = %d", got)
	}
	if got := v.Long("num.partitions"); got != 1 {
		t.Errorf("int via Long = %d", got)
	}
	if got := v.String("ssl.keystore.password"); got != "pw" {
		t.Errorf("password = %q", got)
	}
	if !v.IsNull("advertised.listeners") || v.String("advertised.listeners") != "" {
		t.Error("advertised.listeners should be null")
	}
	if v.IsNull("listeners") {
		t.Error("listeners has a default")
	}
	l := v.List("log.cleanup.policy")
	l[0] = "mutated"
	if v.List("log.cleanup.policy")[0] != "compact" {
		t.Error("List shares its backing array")
	}
}

func TestGetterPanics(t *testing.T) {
	v := mustParse(t, Topic, nil)
	for name, get := range map[string]func(){
		"unknown name": func() { v.Int("nope") },
		"wrong type":   func() { v.Bool("retention.ms") },
		"list as str":  func() { v.String("cleanup.policy") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			get()
		}()
	}
}

// TestRetentionUnits is Kafka's precedence: ms, then minutes, then hours; negative is -1.
func TestRetentionUnits(t *testing.T) {
	tests := []struct {
		name string
		raw  map[string]string
		want int64
		src  Source
	}{
		{"default hours", nil, 168 * msPerHour, SourceDefault},
		{"hours", map[string]string{"log.retention.hours": "1"}, msPerHour, SourceStaticBroker},
		{"minutes beat hours", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "5"}, 5 * msPerMinute, SourceStaticBroker},
		{"ms beats all", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "5", "log.retention.ms": "1234"}, 1234, SourceStaticBroker},
		{"negative ms is forever", map[string]string{"log.retention.ms": "-5"}, -1, SourceStaticBroker},
		{"negative hours is forever", map[string]string{"log.retention.hours": "-1"}, -1, SourceStaticBroker},
		{"large hours do not overflow", map[string]string{"log.retention.hours": "2147483647"}, 2147483647 * msPerHour, SourceStaticBroker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustParse(t, Broker, tt.raw)
			if got := v.Long("log.retention.ms"); got != tt.want {
				t.Errorf("log.retention.ms = %d, want %d", got, tt.want)
			}
			topic, err := ResolveTopic(v, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := topic.Long("retention.ms"); got != tt.want {
				t.Errorf("retention.ms = %d, want %d", got, tt.want)
			}
			if d, _ := topic.Describe("retention.ms"); d.Source != tt.src {
				t.Errorf("retention.ms source = %s, want %s", d.Source, tt.src)
			}
		})
	}
}

func TestRollAndFlushUnits(t *testing.T) {
	tests := []struct {
		name  string
		raw   map[string]string
		topic string
		want  int64
	}{
		{"roll default", nil, "segment.ms", 168 * msPerHour},
		{"roll hours", map[string]string{"log.roll.hours": "2"}, "segment.ms", 2 * msPerHour},
		{"roll ms wins", map[string]string{"log.roll.hours": "2", "log.roll.ms": "60000"}, "segment.ms", 60000},
		{"jitter hours", map[string]string{"log.roll.jitter.hours": "1"}, "segment.jitter.ms", msPerHour},
		{"jitter ms wins", map[string]string{"log.roll.jitter.hours": "1", "log.roll.jitter.ms": "7"}, "segment.jitter.ms", 7},
		{"flush default is never", nil, "flush.ms", 1<<63 - 1},
		{"flush scheduler interval", map[string]string{"log.flush.scheduler.interval.ms": "3000"}, "flush.ms", 3000},
		{"flush interval wins", map[string]string{"log.flush.scheduler.interval.ms": "3000", "log.flush.interval.ms": "10"}, "flush.ms", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic, err := ResolveTopic(mustParse(t, Broker, tt.raw), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := topic.Long(tt.topic); got != tt.want {
				t.Errorf("%s = %d, want %d", tt.topic, got, tt.want)
			}
		})
	}
}

func TestPerListenerValues(t *testing.T) {
	v := mustParse(t, Broker, map[string]string{
		"ssl.keystore.location":                         "/base.jks",
		"listener.name.external.ssl.keystore.location":  "/external.jks",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;",
		"listener.name.internal.max.connections":        "10",
	})
	if got := v.String("listener.name.external.ssl.keystore.location"); got != "/external.jks" {
		t.Errorf("external keystore = %q", got)
	}
	if got := v.String("listener.name.internal.ssl.keystore.location"); got != "/base.jks" {
		t.Errorf("unset listener override should fall back to the base config, got %q", got)
	}
	if got := v.Int("listener.name.internal.max.connections"); got != 10 {
		t.Errorf("internal max.connections = %d", got)
	}
	if !strings.HasPrefix(v.String("listener.name.sasl_ssl.plain.sasl.jaas.config"), "org.apache") {
		t.Error("jaas config lost")
	}
	if _, err := Parse(Broker, map[string]string{"listener.name.x.max.connections": "-1"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("per-listener value not validated: %v", err)
	}
}

func TestLogDirs(t *testing.T) {
	tests := []struct {
		raw  map[string]string
		want []string
	}{
		{nil, []string{"/tmp/kafka-logs"}},
		{map[string]string{"log.dir": "/data"}, []string{"/data"}},
		{map[string]string{"log.dir": "/data", "log.dirs": "/a, /b,"}, []string{"/a", "/b"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, mustParse(t, Broker, tt.raw).LogDirs()); diff != "" {
			t.Errorf("LogDirs(%v): %s", tt.raw, diff)
		}
	}
}

func TestGivenIsACopy(t *testing.T) {
	raw := map[string]string{"num.partitions": "3"}
	v := mustParse(t, Broker, raw)
	raw["num.partitions"] = "9"
	g := v.Given(SourceStaticBroker)
	g["num.partitions"] = "7"
	if v.Int("num.partitions") != 3 || v.Given(SourceStaticBroker)["num.partitions"] != "3" {
		t.Error("Values shares maps with its caller")
	}
}

func TestSameValues(t *testing.T) {
	base := mustParse(t, Broker, map[string]string{"log.retention.hours": "1"})
	same := mustParse(t, Broker, map[string]string{"log.retention.hours": "1"})
	units := mustParse(t, Broker, map[string]string{"log.retention.ms": "3600000"})
	other, err := base.WithDynamic(nil, map[string]string{"message.max.bytes": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if !base.SameValues(same) {
		t.Error("two parses of one config differ")
	}
	if base.SameValues(units) {
		t.Error("log.retention.hours=1 and log.retention.ms=3600000 set different configs, and resolve alike")
	}
	if base.SameValues(other) {
		t.Error("a dynamic message.max.bytes changes nothing")
	}
	t1, _ := ResolveTopic(base, nil)
	t2, _ := ResolveTopic(other, nil)
	if t1.SameValues(t2) || t1.SameValues(base) || !t1.SameValues(t1) || (Values{}).SameValues(t1) || !(Values{}).SameValues(Values{}) {
		t.Error("a topic's max.message.bytes follows the broker's message.max.bytes")
	}
}
