package cli

import (
	"strings"
	"testing"
)

// TestQuotaAlterDescribe sets quotas at every entity level through both
// ways of naming an entity, describes them with each kind of filter, and
// deletes them, against a real Samsa broker.
func TestQuotaAlterDescribe(t *testing.T) {
	b := newSamsaBroker(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--user", "alice", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152"},
			`altered the quotas of user "alice": set producer_byte_rate=1048576, set consumer_byte_rate=2097152`},
		{[]string{"--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", "app", "--add-config", "request_percentage=12.5"},
			`altered the quotas of the default user and client-id "app": set request_percentage=12.5`},
		{[]string{"--user", "alice", "--client", "app", "--add-config", "controller_mutation_rate=0.5"},
			`altered the quotas of user "alice" and client-id "app": set controller_mutation_rate=0.5`},
		{[]string{"--user-defaults", "--add-config", "producer_byte_rate=1024", "--add-config", "consumer_byte_rate=2048"},
			`altered the quotas of the default user: set producer_byte_rate=1024, set consumer_byte_rate=2048`},
		{[]string{"--entity-type", "clients", "--entity-default", "--add-config", "producer_byte_rate=512"},
			`altered the quotas of the default client-id: set producer_byte_rate=512`},
		{[]string{"--ip", "10.0.0.1", "--add-config", "connection_creation_rate=100"},
			`altered the quotas of ip "10.0.0.1": set connection_creation_rate=100`},
		{[]string{"--entity-type", "ips", "--entity-default", "--add-config", "connection_creation_rate=10"},
			`altered the quotas of the default ip: set connection_creation_rate=10`},
		{[]string{"--user", "bob", "--add-config", "producer_byte_rate=5", "--validate-only"},
			`validated (nothing changed) the quotas of user "bob": set producer_byte_rate=5`},
	} {
		if out := b.ok("", append([]string{"quota", "alter"}, c.args...)...); out != c.want+"\n" {
			t.Errorf("quota alter %v:\n%s\nwant:\n%s", c.args, out, c.want)
		}
	}

	all := "ENTITY                         QUOTAS\n" +
		"user=<default>                 consumer_byte_rate=2048, producer_byte_rate=1024\n" +
		"user=<default>, client-id=app  request_percentage=12.5\n" +
		"user=alice                     consumer_byte_rate=2097152, producer_byte_rate=1048576\n" +
		"user=alice, client-id=app      controller_mutation_rate=0.5\n" +
		"client-id=<default>            producer_byte_rate=512\n" +
		"ip=<default>                   connection_creation_rate=10\n" +
		"ip=10.0.0.1                    connection_creation_rate=100\n"
	if out := b.ok("", "quota", "describe"); out != all {
		t.Fatalf("quota describe:\n%s\nwant:\n%s", out, all)
	}
	for _, c := range []struct {
		args []string
		want []string // the entities listed
	}{
		{[]string{"--user", "alice"}, []string{"user=alice"}},
		{[]string{"--user", "alice", "--open-ended"}, []string{"user=alice", "user=alice, client-id=app"}},
		{[]string{"--user-defaults"}, []string{"user=<default>"}},
		{[]string{"--entity-type", "users"}, []string{"user=<default>", "user=alice"}},
		// Names pair with types by position, as in kafka-configs.sh: the
		// type left without one is any name.
		{[]string{"--entity-type", "clients", "--entity-name", "app", "--entity-type", "users"}, []string{"user=<default>, client-id=app", "user=alice, client-id=app"}},
		{[]string{"--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients"}, []string{"user=alice, client-id=app"}},
		{[]string{"--entity-type", "clients", "--open-ended"}, []string{"user=<default>, client-id=app", "user=alice, client-id=app", "client-id=<default>"}},
		{[]string{"--ip", "10.0.0.1"}, []string{"ip=10.0.0.1"}},
		{[]string{"--entity-type", "ips"}, []string{"ip=<default>", "ip=10.0.0.1"}},
		{[]string{"--user", "bob"}, nil},
	} {
		out := b.ok("", append([]string{"quota", "describe"}, c.args...)...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			got = append(got, strings.TrimSpace(strings.SplitN(line, "  ", 2)[0]))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("quota describe %v:\n%s\nwant the entities %q", c.args, out, c.want)
		}
	}
	wantJSON := "[\n  {\n    \"entity\": {\n      \"client-id\": \"app\",\n      \"user\": null\n    },\n" +
		"    \"quotas\": {\n      \"request_percentage\": 12.5\n    }\n  }\n]\n"
	if out := b.ok("", "quota", "describe", "--user-defaults", "--client", "app", "--json"); out != wantJSON {
		t.Errorf("quota describe --json:\n%s\nwant:\n%s", out, wantJSON)
	}

	// Deletes, and what the cluster refuses, in its words.
	if out := b.ok("", "quota", "alter", "--user", "alice", "--delete-config", "consumer_byte_rate", "--add-config", "producer_byte_rate=2048"); out !=
		"altered the quotas of user \"alice\": set producer_byte_rate=2048, deleted consumer_byte_rate\n" {
		t.Errorf("delete:\n%s", out)
	}
	b.fails(`user "alice" has no consumer_byte_rate quota to delete`, "quota", "alter", "--user", "alice", "--delete-config", "consumer_byte_rate")
	b.fails(`user "alice": invalid request: producer_byte_rate cannot be a fractional value.`,
		"quota", "alter", "--user", "alice", "--add-config", "producer_byte_rate=1.5")
	b.fails(`user "alice": invalid request: Invalid configuration key connection_creation_rate`,
		"quota", "alter", "--user", "alice", "--add-config", "connection_creation_rate=5")
	b.fails(`ip "not-an-ip.invalid": invalid request: not-an-ip.invalid is not a valid IP or resolvable host.`,
		"quota", "alter", "--ip", "not-an-ip.invalid", "--add-config", "connection_creation_rate=5")
	b.fails(`the default user: invalid request: Quota request_percentage must be greater than 0`,
		"quota", "alter", "--user-defaults", "--add-config", "request_percentage=-1")
	b.ok("", "quota", "alter", "--user", "alice", "--delete-config", "producer_byte_rate")
	if out := b.ok("", "quota", "describe", "--user", "alice"); out != "ENTITY  QUOTAS\n" {
		t.Errorf("after deleting alice's last quota:\n%s", out)
	}
}

// The quota commands reach a SASL listener with the flags every command
// has.
func TestQuotaOverSASL(t *testing.T) {
	t.Setenv(saslPasswordEnv, "")
	b := saslBroker(t)
	sasl := b.on("SASL_PLAINTEXT")
	sasl.ok("", append([]string{"quota", "alter", "--client", "app", "--add-config", "producer_byte_rate=1024"}, plainAdmin...)...)
	out := sasl.ok("", append([]string{"quota", "describe"}, plainAdmin...)...)
	if !strings.Contains(out, "client-id=app") {
		t.Fatalf("quota describe over SASL:\n%s", out)
	}
	sasl.fails("SASL authentication failed", "quota", "describe", "--sasl-mechanism", "PLAIN", "--sasl-user", "admin", "--sasl-password", "wrong")
}

func TestQuotaFlagErrors(t *testing.T) {
	c := newTestCluster(t)
	for _, f := range []struct {
		want string
		args []string
	}{
		{"no entity: give --user, --client or --ip", []string{"alter", "--add-config", "producer_byte_rate=1"}},
		{"nothing to change: give --add-config or --delete-config", []string{"alter", "--user", "alice"}},
		{"--user is empty: use --user-defaults for the default", []string{"alter", "--user", "", "--add-config", "producer_byte_rate=1"}},
		{"give --user or --user-defaults, not both", []string{"alter", "--user", "a", "--user-defaults", "--add-config", "producer_byte_rate=1"}},
		{`invalid --entity-type "topics": want users, clients or ips`, []string{"alter", "--entity-type", "topics", "--entity-name", "t", "--add-config", "producer_byte_rate=1"}},
		{"the entity type user is given twice", []string{"describe", "--entity-type", "users", "--entity-type", "user"}},
		{"ips cannot be combined with users or clients", []string{"describe", "--ip-defaults", "--user", "alice"}},
		{"--entity-name or --entity-default must be given with each --entity-type for alter", []string{"alter", "--entity-type", "users", "--add-config", "producer_byte_rate=1"}},
		{"more --entity-name and --entity-default than --entity-type", []string{"describe", "--entity-type", "users", "--entity-name", "a", "--entity-default"}},
		{"--entity-name is empty: use --entity-default for the default", []string{"describe", "--entity-type", "users", "--entity-name", ""}},
		{"cannot be used with --user, --client or --ip", []string{"describe", "--entity-type", "users", "--client", "app"}},
		{`invalid --add-config "producer_byte_rate": want key=value`, []string{"alter", "--user", "a", "--add-config", "producer_byte_rate"}},
		{"cannot parse quota configuration value for producer_byte_rate: fast", []string{"alter", "--user", "a", "--add-config", "producer_byte_rate=fast"}},
		{`invalid --add-config "producer_byte_rate=": the value is empty`, []string{"alter", "--user", "a", "--add-config", "producer_byte_rate="}},
		{"--add-config sets producer_byte_rate twice", []string{"alter", "--user", "a", "--add-config", "producer_byte_rate=1,producer_byte_rate=2"}},
		{"producer_byte_rate is both in --add-config and in --delete-config", []string{"alter", "--user", "a", "--add-config", "producer_byte_rate=1", "--delete-config", "producer_byte_rate"}},
		{`unknown command "alice" for "samsa quota describe"`, []string{"describe", "alice"}},
		{`unknown command "descibe" for "samsa quota"; did you mean describe?`, []string{"descibe"}},
	} {
		c.fails(f.want, append([]string{"quota"}, f.args...)...)
	}
}

// The commands speak plain Kafka: kfake, franz-go's fake cluster, serves
// them too.
func TestQuotaOnKfake(t *testing.T) {
	c := newTestCluster(t)
	c.ok("", "quota", "alter", "--user", "alice", "--client-defaults", "--add-config", "producer_byte_rate=1024")
	want := "ENTITY                           QUOTAS\n" +
		"user=alice, client-id=<default>  producer_byte_rate=1024\n"
	if out := c.ok("", "quota", "describe", "--entity-type", "users"); out != "ENTITY  QUOTAS\n" {
		t.Errorf("strict describe of users alone:\n%s", out)
	}
	if out := c.ok("", "quota", "describe", "--user", "alice", "--open-ended"); out != want {
		t.Errorf("quota describe:\n%s\nwant:\n%s", out, want)
	}
}
