package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kafkaTopicConfigs is the topic-level config list of Kafka 4.x's documentation.
var kafkaTopicConfigs = []string{
	"cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
	"compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages",
	"flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
	"leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
	"max.compaction.lag.ms", "max.message.bytes", "message.downconversion.enable",
	"message.timestamp.after.max.ms", "message.timestamp.before.max.ms", "message.timestamp.type",
	"min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
	"remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable",
	"retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
	"segment.ms", "unclean.leader.election.enable",
}

// confluentTopicConfigs are Confluent Server's topic configs that Samsa
// takes too (broker-side schema ID validation).
var confluentTopicConfigs = []string{
	"confluent.key.schema.validation", "confluent.key.subject.name.strategy",
	"confluent.value.schema.validation", "confluent.value.subject.name.strategy",
}

// samsaTopicConfigs are Samsa's own topic configs, which Kafka does not
// have; each is named under samsa.
var samsaTopicConfigs = []string{"samsa.mirror.source"}

func TestTopicCatalogIsKafkas(t *testing.T) {
	var got []string
	for _, e := range Topic.Entries() {
		got = append(got, e.Name)
	}
	want := slices.Sorted(slices.Values(slices.Concat(kafkaTopicConfigs, confluentTopicConfigs, samsaTopicConfigs)))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("topic catalog (-kafka +samsa):\n%s", diff)
	}
}

func TestBrokerCatalogCoversBrief(t *testing.T) {
	for _, name := range []string{
		"node.id", "process.roles", "listeners", "advertised.listeners", "controller.listener.names",
		"listener.security.protocol.map", "log.dirs", "log.dir", "num.partitions", "default.replication.factor",
		"auto.create.topics.enable", "delete.topic.enable", "log.retention.check.interval.ms",
		"log.cleaner.enable", "log.cleaner.threads", "message.max.bytes", "socket.request.max.bytes",
		"socket.send.buffer.bytes", "socket.receive.buffer.bytes", "connections.max.idle.ms",
		"num.network.threads", "num.io.threads", "queued.max.requests", "replica.lag.time.max.ms",
		"replica.fetch.max.bytes", "min.insync.replicas", "offsets.topic.num.partitions",
		"offsets.topic.replication.factor", "offsets.retention.minutes", "offsets.commit.timeout.ms",
		"group.initial.rebalance.delay.ms", "group.min.session.timeout.ms", "group.max.session.timeout.ms",
		"group.max.size", "transaction.state.log.num.partitions", "transactional.id.expiration.ms",
		"transaction.max.timeout.ms", "producer.id.expiration.ms", "fetch.max.bytes", "compression.type",
		"auto.leader.rebalance.enable", "broker.rack", "log.retention.minutes", "log.retention.hours",
		"log.roll.hours", "log.flush.scheduler.interval.ms",
	} {
		if _, ok := Broker.Lookup(name); !ok {
			t.Errorf("broker catalog has no %s", name)
		}
	}
}

func TestEntriesSortedAndDefaultsCanonical(t *testing.T) {
	for _, c := range []*Catalog{Broker, Topic, ClientMetrics, Group} {
		entries := c.Entries()
		if !slices.IsSortedFunc(entries, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("%s entries not sorted", c.scope)
		}
		for _, e := range entries {
			if e.Doc == "" || strings.Contains(e.Doc, "\n") {
				t.Errorf("%s: doc must be one line", e.Name)
			}
			if e.NullDefault {
				if e.DefaultValue != nil || e.Default != "" {
					t.Errorf("%s: null default with a value", e.Name)
				}
				continue
			}
			// Defaults are written as DescribeConfigs prints them, so docs and
			// DescribeConfigs agree.
			if got := formatValue(e.DefaultValue); got != e.Default {
				t.Errorf("%s: default %q prints as %q", e.Name, e.Default, got)
			}
		}
	}
}

// TestTopicServerDefaults checks every fallback the way Kafka's synonym table has it.
func TestTopicServerDefaults(t *testing.T) {
	broker, err := Parse(Broker, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Topic.Entries() {
		if e.ServerDefault == "" {
			continue
		}
		b, ok := Broker.Lookup(e.ServerDefault)
		if !ok {
			t.Errorf("%s falls back to unknown broker config %s", e.Name, e.ServerDefault)
			continue
		}
		if b.Type != e.Type {
			t.Errorf("%s is %s but %s is %s", e.Name, e.Type, b.Name, b.Type)
		}
		if b.Mode != ClusterWide {
			t.Errorf("%s: Kafka makes every topic server default cluster-wide dynamic, got %s", b.Name, b.Mode)
		}
		// The topic default must equal what an empty server.properties yields.
		d, _ := broker.Describe(b.Name)
		if d.Value == nil || *d.Value != e.Default {
			t.Errorf("%s default %s, broker %s resolves to %v", e.Name, e.Default, b.Name, d.Value)
		}
	}
}

func TestUnitSynonyms(t *testing.T) {
	for _, e := range Broker.Entries() {
		for _, s := range e.Synonyms {
			alt, ok := Broker.Lookup(s.Name)
			if !ok {
				t.Errorf("%s: unknown synonym %s", e.Name, s.Name)
				continue
			}
			if e.Type != TypeLong || (alt.Type != TypeInt && alt.Type != TypeLong) {
				t.Errorf("%s (%s) <- %s (%s): want a long fed by an int or long", e.Name, e.Type, alt.Name, alt.Type)
			}
			if alt.Mode != ReadOnly {
				t.Errorf("%s: unit synonyms are read-only in Kafka, got %s", alt.Name, alt.Mode)
			}
		}
	}
}

func TestUpdateModes(t *testing.T) {
	tests := []struct {
		name string
		want UpdateMode
	}{
		{"node.id", ReadOnly},
		{"process.roles", ReadOnly},
		{"log.dirs", ReadOnly},
		{"log.retention.ms", ClusterWide},
		{"log.retention.hours", ReadOnly},
		{"log.retention.minutes", ReadOnly},
		{"log.roll.ms", ClusterWide},
		{"log.roll.hours", ReadOnly},
		{"log.flush.interval.ms", ClusterWide},
		{"log.flush.scheduler.interval.ms", ReadOnly},
		{"log.cleanup.policy", ClusterWide},
		{"message.max.bytes", ClusterWide},
		{"min.insync.replicas", ClusterWide},
		{"unclean.leader.election.enable", ClusterWide},
		{"listeners", PerBroker},
		{"advertised.listeners", PerBroker},
		{"listener.security.protocol.map", PerBroker},
		{"ssl.keystore.location", PerBroker},
		{"sasl.enabled.mechanisms", PerBroker},
		{"num.network.threads", ClusterWide},
		{"num.io.threads", ClusterWide},
		{"max.connections", ClusterWide},
		{"log.cleaner.threads", ClusterWide},
		{"producer.id.expiration.ms", ClusterWide},
		{"socket.request.max.bytes", ReadOnly},
		{"replica.lag.time.max.ms", ReadOnly},
		{"offsets.topic.num.partitions", ReadOnly},
		{"auto.create.topics.enable", ReadOnly},
	}
	for _, tt := range tests {
		e, ok := Broker.Lookup(tt.name)
		if !ok {
			t.Errorf("no %s", tt.name)
			continue
		}
		if e.Mode != tt.want {
			t.Errorf("%s mode = %s, want %s", tt.name, e.Mode, tt.want)
		}
	}
}

func TestListenerNames(t *testing.T) {
	tests := []struct {
		name, base string
		ok         bool
	}{
		{"ssl.keystore.location", "", true},
		{"listener.name.external.ssl.keystore.location", "ssl.keystore.location", true},
		{"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", "sasl.jaas.config", true},
		{"listener.name.sasl_ssl.sasl.jaas.config", "", false},            // Kafka wants a mechanism here
		{"listener.name.external.log.retention.ms", "", false},            // not a per-listener config
		{"listener.name..ssl.keystore.location", "", false},               // no listener
		{"listener.name.external.plain.ssl.keystore.location", "", false}, // no mechanism form
		{"listener.name.external", "", false},
	}
	for _, tt := range tests {
		_, base, ok := Broker.entryFor(tt.name)
		if ok != tt.ok || base != tt.base {
			t.Errorf("entryFor(%q) = %q, %v; want %q, %v", tt.name, base, ok, tt.base, tt.ok)
		}
	}
	if _, _, ok := Topic.entryFor("listener.name.x.ssl.keystore.location"); ok {
		t.Error("topic catalog accepted a listener name")
	}
}

func TestLookup(t *testing.T) {
	e, ok := Topic.Lookup("retention.ms")
	if !ok || e.Type != TypeLong || e.ServerDefault != "log.retention.ms" || e.DefaultValue != int64(604800000) {
		t.Fatalf("Lookup(retention.ms) = %+v, %v", e, ok)
	}
	if _, ok := Topic.Lookup("log.retention.ms"); ok {
		t.Error("topic catalog has a broker config")
	}
	if e, _ := Broker.Lookup("offsets.topic.replication.factor"); e.DefaultValue != int16(3) {
		t.Errorf("short default = %#v", e.DefaultValue)
	}
}

func TestNewCatalogPanicsOnBadDefault(t *testing.T) {
	for _, entries := range [][]*Entry{
		{{Name: "a", Type: TypeInt, Default: "x"}},
		{{Name: "a", Type: TypeInt, Default: "0", Validator: atLeast(1)}},
		{{Name: "a", Type: TypeInt, Default: "1"}, {Name: "a", Type: TypeInt, Default: "1"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("newCatalog(%s) did not panic", entries[0].Default)
				}
			}()
			newCatalog("test", entries)
		}()
	}
}

// TestEveryEntryHasAStatus fails for a config whose fate nobody decided: every entry says
// whether Samsa wires it, refuses it until a feature arrives, or ignores it by design.
func TestEveryEntryHasAStatus(t *testing.T) {
	for _, c := range []*Catalog{Broker, Topic, ClientMetrics, Group} {
		for _, e := range c.Entries() {
			if err := e.checkStatus(); err != nil {
				t.Error(err)
			}
		}
	}
}

// A topic config and the broker config it falls back to are one setting: they must be
// supported, or not, together.
func TestTopicStatusMatchesServerDefault(t *testing.T) {
	for _, e := range Topic.Entries() {
		if e.ServerDefault == "" {
			continue
		}
		b, ok := Broker.Lookup(e.ServerDefault)
		if !ok {
			t.Errorf("%s: no broker config %s", e.Name, e.ServerDefault)
			continue
		}
		if e.Status() != b.Status() {
			t.Errorf("%s is %s but its server default %s is %s", e.Name, e.Status(), b.Name, b.Status())
		}
	}
}

func TestNoEffect(t *testing.T) {
	v := mustParse(t, Broker, map[string]string{
		"num.io.threads":            "8",
		"num.network.threads":       "3",
		"controller.listener.names": "PLAINTEXT",
		"ssl.keystore.type":         "JKS", // unsupported at its default: nothing asked for
		"log.retention.hours":       "1",   // wired
		"process.roles":             "controller,broker",
	})
	want := []string{
		"num.io.threads=8 has no effect in Samsa: Samsa has no request handler pool: each connection's requests run on that connection's goroutine",
		"num.network.threads=3 has no effect in Samsa: each connection has its own reader and writer goroutines; there are no network threads to size",
	}
	if diff := cmp.Diff(want, v.NoEffect()); diff != "" {
		t.Errorf("NoEffect (-want +got):\n%s", diff)
	}
	d, err := v.WithDynamic(nil, map[string]string{"background.threads": "4"})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.NoEffect(); len(got) != 3 || !strings.HasPrefix(got[0], "background.threads=4 has no effect in Samsa: ") {
		t.Errorf("dynamic configs: %q", got)
	}
}
