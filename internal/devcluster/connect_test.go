package devcluster

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterConnect: with Config.Connect every broker node runs a
// Connect worker on a port of its own, and the workers form one Connect
// cluster: one group of two, a connector created through node 2's API is
// seen through node 1's and copies a file's lines through a topic
// replicated over both nodes. A directory kept keeps the ports.
func TestClusterConnect(t *testing.T) {
	dir := t.TempDir()
	c, err := New(Config{Binary: binary, Dir: dir, Nodes: 2, StopTimeout: 20 * time.Second, Connect: true,
		Overrides: map[string]string{"samsa.schema.registry.listener": "", "samsa.rest.listener": "", "samsa.connect.offset.flush.interval.ms": "500"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start(t, c)
	n1, n2 := c.Node(1).ConnectAddr(), c.Node(2).ConnectAddr()
	if n1 == "" || n2 == "" || n1 == n2 {
		t.Fatalf("Connect addresses %q and %q", n1, n2)
	}
	hc := &http.Client{Timeout: 20 * time.Second}
	for _, a := range []string{n1, n2} {
		waitFor(t, 60*time.Second, "worker "+a+" ready", func() (bool, string) {
			code, body := call(t, hc, "GET", "http://"+a+"/health", "")
			return code == 200, body
		})
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	waitFor(t, 30*time.Second, "a group of two workers", func() (bool, string) {
		g, err := adm.DescribeGroups(t.Context(), "connect-cluster")
		d := g["connect-cluster"]
		return err == nil && d.ProtocolType == "connect" && len(d.Members) == 2, d.State
	})
	if _, err := adm.CreateTopic(t.Context(), 1, 2, nil, "lines"); err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	if err := os.WriteFile(in, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]map[string]string{
		"src":  {"connector.class": "FileStreamSource", "file": in, "topic": "lines"},
		"sink": {"connector.class": "FileStreamSink", "file": out, "topics": "lines"},
	} {
		body, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
		// Through node 2: a follower forwards the write to the leader.
		if code, resp := call(t, hc, "POST", "http://"+n2+"/connectors", string(body)); code != 201 {
			t.Fatalf("create %s through node 2: %d %s", name, code, resp)
		}
	}
	waitFor(t, 30*time.Second, "the lines copied", func() (bool, string) {
		got, _ := os.ReadFile(out)
		return string(got) == "one\ntwo\n", string(got)
	})
	if code, body := call(t, hc, "GET", "http://"+n1+"/connectors", ""); code != 200 || !strings.Contains(body, `"sink"`) || !strings.Contains(body, `"src"`) {
		t.Errorf("connectors through node 1: %d %s", code, body)
	}
	if err := c.Close(); err != nil {
		log, _ := os.ReadFile(c.Node(2).LogPath())
		var keep []string
		for _, l := range strings.Split(string(log), "\n") {
			if !strings.Contains(l, "component=group") && !strings.Contains(l, "component=raft") && !strings.Contains(l, "waiting for the active") && !strings.Contains(l, "coordinator unloaded") && !strings.Contains(l, "component=connect-group") {
				keep = append(keep, l)
			}
		}
		if len(keep) > 60 {
			keep = keep[len(keep)-60:]
		}
		t.Fatalf("%v\n%s", err, strings.Join(keep, "\n"))
	}
	again, err := New(Config{Binary: binary, Dir: dir, Nodes: 2, Connect: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.Node(1).ConnectAddr() != n1 || again.Node(2).ConnectAddr() != n2 {
		t.Errorf("kept directory: Connect on %s, %s; was %s, %s", again.Node(1).ConnectAddr(), again.Node(2).ConnectAddr(), n1, n2)
	}
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last: %.300s)", what, d, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// call sends a request, with a JSON body when body is not "", and
// answers status and body (0 when the request failed).
func call(t *testing.T, hc *http.Client, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b := new(strings.Builder)
	_, _ = io.Copy(b, resp.Body)
	return resp.StatusCode, b.String()
}
