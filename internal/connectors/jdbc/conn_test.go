package jdbc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/freeport"
)

// JDBC URLs map to the Go drivers' connection strings.
func TestParseConnectionURL(t *testing.T) {
	cases := []struct {
		url, user, password string
		kind                dbKind
		dsn                 string
	}{
		{"jdbc:postgresql://db.example:5433/shop?user=app&password=pw&sslmode=require", "", "", postgres,
			"postgres://db.example:5433/shop?password=pw&sslmode=require&user=app"},
		{"jdbc:postgresql://db.example/shop?currentSchema=sales&ApplicationName=x", "u", "p", postgres,
			"postgres://db.example:5432/shop?application_name=x&password=p&search_path=sales&user=u"},
		{"jdbc:postgresql:shop", "", "", postgres, "postgres://localhost:5432/shop"},
		{"jdbc:sqlite:/var/lib/app.db", "", "", sqlite, "file:/var/lib/app.db?_pragma=busy_timeout(10000)&_txlock=immediate"},
	}
	for _, c := range cases {
		got, err := parseConnectionURL(c.url, c.user, c.password)
		if err != nil || got.kind != c.kind || got.dsn != c.dsn {
			t.Errorf("%s: %+v %v, want %s %s", c.url, got, err, c.kind, c.dsn)
		}
	}
}

// connection.attempts and connection.backoff.ms: a database that does not
// answer is tried that many times, that far apart, then refused clearly.
func TestConnectionAttempts(t *testing.T) {
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	cfg := props(cfgConnectionURL, fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/none?sslmode=disable", port),
		cfgMode, modeBulk, cfgTopicPrefix, "p", cfgConnectionAttempts, "3", cfgConnectionBackoff, "150")
	start := time.Now()
	err = (&SourceConnector{}).Start(&connectorCtx{}, cfg)
	if err == nil || !strings.Contains(err.Error(), "after 3 attempt(s)") {
		t.Fatalf("start against nothing: %v", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("3 attempts 150ms apart took %v", took)
	}
}

// connection.user overrides the URL's user.
func TestConnectionUser(t *testing.T) {
	db := startPG(t)
	db.exec(t, "CREATE TABLE t (id INT NOT NULL)", "INSERT INTO t VALUES (1)")
	url := db.pg.JDBCURL("postgres") + "?sslmode=disable"
	cfg := props(cfgConnectionURL, url, cfgMode, modeBulk, cfgTopicPrefix, "p", cfgConnectionUser, db.pg.User, cfgPollInterval, "50")
	_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
	pollN(t, tasks[0], 1, 0)

	cfg[cfgConnectionUser] = "nobody"
	cfg[cfgConnectionAttempts] = "1"
	err := (&SourceConnector{}).Start(&connectorCtx{}, cfg)
	if err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("unknown user: %v", err)
	}
}
