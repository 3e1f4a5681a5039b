package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestConsoleCommand runs "samsa console" as users do, against a Samsa
// broker: it serves the console's pages and static files on the port it
// names, with the registry's and Connect's pages in the nav when their
// URLs are given.
func TestConsoleCommand(t *testing.T) {
	b := newSamsaBroker(t)
	proc := exec.Command(samsaBinary(t), "console", "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0",
		"--schema-registry-url", "http://127.0.0.1:1", "--connect-url", "http://127.0.0.1:1")
	stdout, err := proc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	proc.Stderr = &stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	g := task.NewGroup(context.Background())
	t.Cleanup(g.Stop)
	t.Cleanup(func() { proc.Process.Kill() })
	first := make(chan string, 1)
	g.Go(func(context.Context) {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- line
		io.Copy(io.Discard, stdout)
	})
	var base string
	select {
	case line := <-first:
		m := regexp.MustCompile(`console serving on (http://[0-9.:]+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
		base = m[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa console did not start; stderr:\n%s", stderr.String())
	}
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
