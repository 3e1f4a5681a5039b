package cli

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsoleCommand runs "samsa console" as users do, against a Samsa
// broker: it serves the console's pages and static files on the port it
// names, with the registry's and Connect's pages in the nav when their
// URLs are given.
func TestConsoleCommand(t *testing.T) {
	b := newSamsaBroker(t)
	_, m := startServing(t, regexp.MustCompile(`console serving on (http://[0-9.:]+)`), "console", "--bootstrap-server", b.addr,
		"--listener", "127.0.0.1:0", "--schema-registry-url", "http://127.0.0.1:1", "--connect-url", "http://127.0.0.1:1")
	base := m[1]
	cl := &http.Client{Timeout: 20 * time.Second}
	resp, err := cl.Get(base + "/no-such-page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), `href="/schemas"`) || !strings.Contains(string(body), `href="/connect"`) {
		t.Fatalf("GET /no-such-page: %d, want the console's 404 page with the registry and Connect in its nav:\n%s", resp.StatusCode, body)
	}
}

func TestConsoleFlagsRefused(t *testing.T) {
	c := newTestCluster(t)
	c.fails("--listener-tls-cert and --listener-tls-key go together", "console", "--listener", "127.0.0.1:0", "--listener-tls-cert", "c.pem")
	c.fails("page size 501: at most 500", "console", "--listener", "127.0.0.1:0", "--page-size", "501")
	c.fails(`"ftp://x" is not an http:// or https:// URL`, "console", "--listener", "127.0.0.1:0", "--connect-url", "ftp://x")
	c.fails("cannot check a user and password", "console", "--listener", "127.0.0.1:0", "--login-mechanism", "OAUTHBEARER")
	c.fails("drop --sasl-mechanism", "console", "--listener", "127.0.0.1:0", "--login-mechanism", "PLAIN", "--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password", "p")
}
