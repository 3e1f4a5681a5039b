package cli

import (
	"strings"
	"testing"
)

func TestUserCreateListDelete(t *testing.T) {
	t.Setenv(userPasswordEnv, "")
	b := newSamsaBroker(t)
	if out := b.ok("", "user", "create", "alice", "--password", "alice-secret"); out != "set the SCRAM-SHA-256 credential of user \"alice\" (4096 iterations)\n" {
		t.Fatalf("create:\n%s", out)
	}
	b.ok("alice-other\nnot the password\n", "user", "create", "alice", "--mechanism", "scram-sha-512", "--iterations", "8192", "--password-stdin")
	t.Setenv(userPasswordEnv, "bob-secret")
	b.ok("", "user", "create", "bob")

	want := "USER   MECHANISM      ITERATIONS\n" +
		"alice  SCRAM-SHA-256  4096\n" +
		"alice  SCRAM-SHA-512  8192\n" +
		"bob    SCRAM-SHA-256  4096\n"
	if out := b.ok("", "user", "list"); out != want {
		t.Fatalf("user list:\n%s\nwant:\n%s", out, want)
	}
	wantJSON := "[\n  {\n    \"user\": \"bob\",\n    \"mechanism\": \"SCRAM-SHA-256\",\n    \"iterations\": 4096\n  }\n]\n"
	if out := b.ok("", "user", "list", "bob", "--json"); out != wantJSON {
		t.Fatalf("user list bob --json:\n%s", out)
	}
	b.fails(`user "carol" has no SCRAM credential`, "user", "list", "bob", "carol")

	if out := b.ok("", "user", "delete", "alice", "--mechanism", "SCRAM-SHA-512"); out != "deleted the SCRAM-SHA-512 credential of user \"alice\"\n" {
		t.Fatalf("delete alice SCRAM-SHA-512:\n%s", out)
	}
	b.fails(`user "alice" has no SCRAM-SHA-512 credential`, "user", "delete", "alice", "--mechanism", "SCRAM-SHA-512")
	b.ok("", "user", "create", "bob", "--mechanism", "SCRAM-SHA-512", "--password", "bob-512")
	want = "deleted the SCRAM-SHA-256 credential of user \"alice\"\n" +
		"deleted the SCRAM-SHA-256 credential of user \"bob\"\n" +
		"deleted the SCRAM-SHA-512 credential of user \"bob\"\n"
	if out := b.ok("", "user", "delete", "alice", "bob"); out != want {
		t.Fatalf("delete alice bob:\n%s\nwant:\n%s", out, want)
	}
	if out := b.ok("", "user", "list"); out != "USER  MECHANISM  ITERATIONS\n" {
		t.Fatalf("user list after deleting everyone:\n%s", out)
	}
	b.fails(`user "alice" has no SCRAM credential`, "user", "delete", "alice")
}

func TestUserFlagErrors(t *testing.T) {
	t.Setenv(userPasswordEnv, "")
	c := newTestCluster(t)
	c.fails(`invalid --mechanism "PLAIN": want SCRAM-SHA-256 or SCRAM-SHA-512`, "user", "create", "alice", "--mechanism", "PLAIN", "--password", "x")
	c.fails(`invalid --mechanism "SHA-1": want SCRAM-SHA-256 or SCRAM-SHA-512`, "user", "delete", "alice", "--mechanism", "SHA-1")
	c.fails("invalid --iterations 100: Kafka takes 4096 to 16384", "user", "create", "alice", "--iterations", "100", "--password", "x")
	c.fails("invalid --iterations 20000", "user", "create", "alice", "--iterations", "20000", "--password", "x")
	c.fails("no password: give --password, set SAMSA_USER_PASSWORD, or pass --password-stdin", "user", "create", "alice")
	c.fails("give --password or --password-stdin, not both", "user", "create", "alice", "--password", "x", "--password-stdin")
	c.fails("--password-stdin: the first line of standard input is empty", "user", "create", "alice", "--password-stdin")
	c.fails("--password is empty", "user", "create", "alice", "--password", "")
	c.fails("accepts 1 arg(s), received 2", "user", "create", "alice", "bob", "--password", "x")
	c.fails(`unknown command "crate" for "samsa user"; did you mean create?`, "user", "crate")
}

// A user samsa user create makes logs in with SCRAM at once, with the
// flags or a --command-config file, and no longer once deleted. The
// password reaches the credential from the flag, the environment and
// standard input alike.
func TestScramUserLogsIn(t *testing.T) {
	t.Setenv(saslPasswordEnv, "")
	b := saslBroker(t)
	b.ok("", "topic", "create", "scram-topic", "--partitions", "1")
	b.ok("alice-secret\r\nnot the password\n", "user", "create", "alice", "--password-stdin")
	b.ok("", "user", "create", "bob", "--password", "bob-secret")
	t.Setenv(userPasswordEnv, "carol-secret")
	b.ok("", "user", "create", "carol")
	sasl := b.on("SASL_PLAINTEXT").withTimeout(shortTimeout)
	for _, user := range []string{"alice", "bob", "carol"} {
		out := sasl.ok("", "topic", "list", "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", user, "--sasl-password", user+"-secret")
		if !strings.Contains(out, "scram-topic") {
			t.Fatalf("topic list as %s:\n%s", user, out)
		}
	}
	sasl.fails("SASL authentication failed at "+sasl.addr, "topic", "list", "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "alice", "--sasl-password", "wrong")
	file := writeFile(t, "scram.properties", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`+"\n")
	sasl.ok("", "topic", "list", "--command-config", file)

	b.ok("", "user", "delete", "alice")
	sasl.fails("SASL authentication failed at "+sasl.addr, "topic", "list", "--command-config", file)
}
