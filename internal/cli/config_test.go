package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConfigDescribeAlter runs kafka-configs.sh's forms against a real
// Samsa broker started with log.retention.hours=100: a topic, the broker
// and the broker default, with every value's source and synonyms.
func TestConfigDescribeAlter(t *testing.T) {
	b := newSamsaBroker(t, "--override", "log.retention.hours=100")
	b.ok("", "topic", "create", "orders", "--partitions", "1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--entity-type", "topics", "--entity-name", "orders", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]"},
			"Completed updating config for topic orders.\n"},
		{[]string{"--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=5000", "--add-config", "log.segment.bytes=3145728"},
			"Completed updating default config for brokers in the cluster.\n"},
		{[]string{"--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.segment.bytes=4194304"},
			"Completed updating config for broker 1.\n"},
	} {
		if out := b.ok("", append([]string{"config", "alter"}, c.args...)...); out != c.want {
			t.Errorf("config alter %v:\n%s\nwant:\n%s", c.args, out, c.want)
		}
	}

	want := "Dynamic configs for topic orders are:\n" +
		"  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}\n" +
		"  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000, " +
		"STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168}\n"
	if out := b.ok("", "config", "describe", "--entity-type", "topics", "--entity-name", "orders"); out != want {
		t.Errorf("describe the topic:\n%s\nwant:\n%s", out, want)
	}
	want = "Dynamic configs for broker 1 are:\n" +
		"  log.segment.bytes=4194304 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.segment.bytes=4194304, " +
		"DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=3145728, DEFAULT_CONFIG:log.segment.bytes=1073741824}\n"
	if out := b.ok("", "config", "describe", "--entity-type", "brokers", "--entity-name", "1"); out != want {
		t.Errorf("describe broker 1:\n%s\nwant:\n%s", out, want)
	}
	wantDefault := "Default configs for brokers in the cluster are:\n" +
		"  log.retention.ms=5000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000}\n" +
		"  log.segment.bytes=3145728 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=3145728}\n"
	if out := b.ok("", "config", "describe", "--entity-type", "brokers", "--entity-default"); out != wantDefault {
		t.Errorf("describe the broker default:\n%s\nwant:\n%s", out, wantDefault)
	}
	// Without a name: every broker, then the default.
	if out := b.ok("", "config", "describe", "--entity-type", "brokers"); out != want+wantDefault {
		t.Errorf("describe every broker:\n%s\nwant:\n%s", out, want+wantDefault)
	}
	all := b.ok("", "config", "describe", "--entity-type", "brokers", "--entity-name", "1", "--all")
	for _, line := range []string{
		"All configs for broker 1 are:\n",
		"  log.retention.hours=100 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168}\n",
		"  log.retention.ms=5000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000, STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168}\n",
		"  num.io.threads=8 sensitive=false synonyms={DEFAULT_CONFIG:num.io.threads=8}\n",
	} {
		if !strings.Contains(all, line) {
			t.Errorf("describe --all lacks %q:\n%s", line, all)
		}
	}

	var described []describedResource
	if err := json.Unmarshal([]byte(b.ok("", "config", "describe", "--entity-type", "topics", "--entity-name", "orders", "--json")), &described); err != nil {
		t.Fatal(err)
	}
	if len(described) != 1 || described[0].EntityName != "orders" || len(described[0].Configs) != 2 ||
		described[0].Configs[1].Name != "retention.ms" || described[0].Configs[1].Source != "DYNAMIC_TOPIC_CONFIG" ||
		len(described[0].Configs[1].Synonyms) != 4 || described[0].Configs[1].Synonyms[2].Source != "STATIC_BROKER_CONFIG" {
		t.Errorf("describe --json: %+v", described)
	}

	// Deleting puts the value back to what it falls back to.
	b.ok("", "config", "alter", "--entity-type", "topics", "--entity-name", "orders", "--delete-config", "retention.ms,cleanup.policy")
	if out := b.ok("", "config", "describe", "--entity-type", "topics", "--entity-name", "orders"); out != "Dynamic configs for topic orders are:\n" {
		t.Errorf("after the deletes:\n%s", out)
	}

	// The cluster's refusals, in its words.
	b.fails(`topic "orders": invalid config: `, "config", "alter", "--entity-type", "topics", "--entity-name", "orders", "--add-config", "retention.ms=x")
	b.fails(`broker 1: invalid request: `, "config", "alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.retention.hours=1")
	b.fails(`topic "missing": unknown topic or partition`, "config", "describe", "--entity-type", "topics", "--entity-name", "missing")
	b.fails("invalid config(s) to delete: segment.ms is not set on topic \"orders\"",
		"config", "alter", "--entity-type", "topics", "--entity-name", "orders", "--delete-config", "segment.ms")
	b.fails("invalid config(s) to delete: log.roll.ms is not set on the broker default",
		"config", "alter", "--entity-type", "brokers", "--entity-default", "--delete-config", "log.roll.ms")
}

// TestConfigQuotas: users, clients and ips go through the quota commands.
func TestConfigQuotas(t *testing.T) {
	b := newSamsaBroker(t)
	if out := b.ok("", "config", "alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=1024"); out !=
		"altered the quotas of user \"alice\": set producer_byte_rate=1024\n" {
		t.Errorf("config alter users: %s", out)
	}
	b.ok("", "config", "alter", "--entity-type", "ips", "--entity-default", "--add-config", "connection_creation_rate=10")
	want := "ENTITY      QUOTAS\nuser=alice  producer_byte_rate=1024\n"
	if out := b.ok("", "config", "describe", "--entity-type", "users"); out != want {
		t.Errorf("config describe users:\n%s\nwant:\n%s", out, want)
	}
	if out := b.ok("", "config", "describe", "--entity-type", "ips", "--entity-default"); !strings.Contains(out, "ip=<default>  connection_creation_rate=10") {
		t.Errorf("config describe ips: %s", out)
	}
	b.fails("user \"alice\" has no consumer_byte_rate quota to delete", "config", "alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "consumer_byte_rate")
	b.fails("SCRAM credentials are set with samsa user create", "config", "alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "SCRAM-SHA-256=[password=x]")
}

// TestConfigFlags: what the command refuses before it asks the cluster.
func TestConfigFlags(t *testing.T) {
	c := newTestCluster(t)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"give --entity-type: topics, brokers", []string{"describe"}},
		{`invalid --entity-type "queues"`, []string{"describe", "--entity-type", "queues"}},
		{"only users and clients may be given together", []string{"describe", "--entity-type", "topics", "--entity-type", "brokers"}},
		{"give --entity-name (or --entity-default) for the topic to alter", []string{"alter", "--entity-type", "topics", "--add-config", "a=b"}},
		{`the entity name for brokers must be a broker ID, found "one"`, []string{"describe", "--entity-type", "brokers", "--entity-name", "one"}},
		{`the entity name for broker-loggers must be a broker ID, found ""`, []string{"describe", "--entity-type", "broker-loggers", "--entity-name", ""}},
		{"--entity-default is for brokers (and users, clients and ips), not topics", []string{"describe", "--entity-type", "topics", "--entity-default"}},
		{"give --entity-name: the client-metric to describe", []string{"describe", "--entity-type", "client-metrics"}},
		{"nothing to change: give --add-config or --delete-config", []string{"alter", "--entity-type", "topics", "--entity-name", "t"}},
		{`invalid --add-config "retention.ms": want key=value`, []string{"alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "retention.ms"}},
		{"--add-config sets a twice", []string{"alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "a=1,a=2"}},
		{"a is both in --add-config and in --delete-config", []string{"alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "a=1", "--delete-config", "a"}},
		{"ips cannot be combined with users or clients", []string{"describe", "--entity-type", "users", "--entity-type", "ips"}},
	} {
		c.fails(tc.want, append([]string{"config"}, tc.args...)...)
	}
}

func TestParseConfigAdds(t *testing.T) {
	got, err := parseConfigAdds([]string{"a=1, b = [x,y] ,c=", "d=[p]"})
	want := [][2]string{{"a", "1"}, {"b", "x,y"}, {"c", ""}, {"d", "p"}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("parseConfigAdds = %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d = %q, want %q", i, got[i], want[i])
		}
	}
	if _, err := parseConfigAdds([]string{"a=b=c"}); err == nil {
		t.Error("a=b=c accepted")
	}
}

// TestConfigBrokerLoggers changes a broker's log levels as
// kafka-configs.sh --entity-type broker-loggers does.
func TestConfigBrokerLoggers(t *testing.T) {
	b := newSamsaBroker(t)
	if out := b.ok("", "config", "alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "group=DEBUG,root=WARN"); out != "Completed updating config for broker-logger 1.\n" {
		t.Errorf("alter: %s", out)
	}
	out := b.ok("", "config", "describe", "--entity-type", "broker-loggers", "--entity-name", "1")
	for _, line := range []string{
		"Dynamic configs for broker-logger 1 are:\n",
		"  group=DEBUG sensitive=false synonyms={}\n",
		"  root=WARN sensitive=false synonyms={}\n",
		"  storage=WARN sensitive=false synonyms={}\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("describe lacks %q:\n%s", line, out)
		}
	}
	b.ok("", "config", "alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--delete-config", "group")
	if out := b.ok("", "config", "describe", "--entity-type", "broker-loggers", "--entity-name", "1"); !strings.Contains(out, "  group=WARN ") {
		t.Errorf("after deleting group's level:\n%s", out)
	}
	b.fails("invalid broker logger(s): nope", "config", "alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "nope=DEBUG")
	b.fails("broker-logger 1: invalid config: Cannot set the log level of group to LOUD as it is not a supported log level",
		"config", "alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "group=LOUD")
	b.fails("broker-logger 1: invalid request: Removing the log level of the root logger is not allowed",
		"config", "alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--delete-config", "root")
}
