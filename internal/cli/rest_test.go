package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestRestCommand runs "samsa rest" as users do, against a Samsa broker:
// it serves Confluent's v3 API, produces a record a Kafka client reads
// back, refuses a body past --max-body, and ends cleanly on SIGTERM.
func TestRestCommand(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "rest-cli", "--partitions", "1")
	proc := exec.Command(samsaBinary(t), "rest", "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0", "--max-body", "200")
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
	t.Cleanup(g.Stop) // runs after the kill below: cleanups run last first
	t.Cleanup(func() { proc.Process.Kill() })
	first := make(chan string, 1)
	g.Go(func(context.Context) { // ends with the process's stdout
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- line
		io.Copy(io.Discard, stdout)
	})
	var base string
	select {
	case line := <-first:
		m := regexp.MustCompile(`rest proxy serving on (http://[0-9.:]+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
		base = m[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa rest did not start; stderr:\n%s", stderr.String())
	}

	var clusters struct {
		Data []struct {
			ClusterID string `json:"cluster_id"`
		} `json:"data"`
	}
	restCall(t, "GET", base+"/v3/clusters", "", 200, &clusters)
	if len(clusters.Data) != 1 || clusters.Data[0].ClusterID == "" {
		t.Fatalf("clusters: %+v", clusters)
	}
	records := base + "/v3/clusters/" + clusters.Data[0].ClusterID + "/topics/rest-cli/records"
	restCall(t, "POST", records, `{"key":{"type":"STRING","data":"k1"},"value":{"type":"STRING","data":"over http"}}`, 200, nil)
	restCall(t, "POST", records, `{"value":{"type":"STRING","data":"`+strings.Repeat("x", 300)+`"}}`, 413, nil)
	if out := b.ok("", "consume", "rest-cli", "--max", "1", "--format", `%k=%v\n`); out != "k1=over http\n" {
		t.Fatalf("consumed:\n%s", out)
	}

	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	g.Go(func(context.Context) { done <- proc.Wait() })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("samsa rest did not stop on SIGTERM")
	}
}

// restCall sends a JSON request, checks the status and decodes the answer
// into out (when not nil).
func restCall(t *testing.T, method, url, body string, status int, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, url, raw, err)
		}
	}
}

func TestRestFlagsRefused(t *testing.T) {
	c := newTestCluster(t)
	c.fails("--max-body 0: must be positive", "rest", "--listener", "127.0.0.1:0", "--max-body", "0")
	c.fails("--consumer-instance-timeout-ms 0: must be positive", "rest", "--listener", "127.0.0.1:0", "--consumer-instance-timeout-ms", "0")
	c.fails(`advertised URL "rest.example:8082"`, "rest", "--listener", "127.0.0.1:0", "--advertised-url", "rest.example:8082")
}

// TestRestV2ConsumerFlags: --advertised-url starts a v2 consumer
// instance's base_uri, and --consumer-instance-timeout-ms closes an idle
// instance.
func TestRestV2ConsumerFlags(t *testing.T) {
	b := newSamsaBroker(t)
	proc := exec.Command(samsaBinary(t), "rest", "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0",
		"--advertised-url", "https://rest-1.example:8082", "--consumer-instance-timeout-ms", "1000")
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
		m := regexp.MustCompile(`rest proxy serving on (http://[0-9.:]+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
		base = m[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa rest did not start; stderr:\n%s", stderr.String())
	}
	var created struct {
		InstanceID string `json:"instance_id"`
		BaseURI    string `json:"base_uri"`
	}
	restCall(t, "POST", base+"/consumers/g", `{"name":"c"}`, 200, &created)
	if created.BaseURI != "https://rest-1.example:8082/consumers/g/instances/c" {
		t.Fatalf("base_uri %q", created.BaseURI)
	}
	restCall(t, "GET", base+"/consumers/g/instances/c/subscription", "", 200, nil)
	// Any request would keep the instance alive: wait past its timeout
	// (plus the expiry check's quarter) without one.
	time.Sleep(1600 * time.Millisecond)
	restCall(t, "GET", base+"/consumers/g/instances/c/subscription", "", 404, nil)
}
