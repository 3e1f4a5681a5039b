package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fileLimit is the open-files limit (ulimit -n, soft and hard) the node of
// TestOpenFilesLimit runs under: a few hundred partitions reach it.
const fileLimit = 400

// TestOpenFilesLimit runs a node under a low open-files limit and creates
// topics until one cannot open its logs. What Kafka does there is take
// the log directory offline, with every partition in it; Samsa's node
// must keep its directory and go on serving the partitions it has (a
// produce and a fetch of one created first), tell the operator (/readyz),
// and bring the stuck topic up by itself once files are freed (deleting
// topics): the failed install is tried again with each metadata change.
func TestOpenFilesLimit(t *testing.T) {
	wrapper := filepath.Join(t.TempDir(), "samsa-limited")
	script := fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 1\nexec %q \"$@\"\n", fileLimit, binary)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, devcluster.Config{Nodes: 1, Binary: wrapper})
	n := c.Node(1)
	if limit := processFileLimit(t, n.Pid()); limit != fileLimit {
		t.Fatalf("the node runs with an open-files limit of %d, want %d", limit, fileLimit)
	}
	adm := adminClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "kept"); err != nil {
		t.Fatal(err)
	}
	produceTo(t, c.Addrs(), "kept", 0, "before", kgo.AllISRAcks())

	const perTopic = 25
	stuck := ""
	for k := 1; k <= 40 && stuck == ""; k++ {
		topic := fmt.Sprintf("fill-%02d", k)
		if _, err := adm.CreateTopic(ctx, perTopic, 1, nil, topic); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		if !produceAll(ctx, c.Addrs(), topic, perTopic, 5*time.Second) && stuckAtLimit(ctx, t, n, c.Addrs(), topic, perTopic) {
			stuck = topic
		}
	}
	if stuck == "" {
		t.Fatalf("40 topics of %d partitions each came up under a limit of %d open files", perTopic, fileLimit)
	}
	t.Logf("%s could not open its logs at %d open files (limit %d)", stuck, openFilesOf(t, n.Pid()), fileLimit)

	// The node goes on: its directory online, the partitions it had served.
	offline, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	offline.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil {
			t.Errorf("log directory %s: %v", d.Dir, d.Err)
		}
	})
	produceTo(t, c.Addrs(), "kept", 0, "after", kgo.AllISRAcks())
	for _, v := range []string{"before", "after"} {
		if !readBack(ctx, c.Addrs(), "kept", 0, v) {
			t.Fatalf("%q not read back from kept-0 at the open-files limit", v)
		}
	}
	if err := readyz(ctx, n); err == nil {
		t.Error("/readyz answers ready while a topic's logs do not open")
	}
	if strings.Contains(readFile(t, n.LogPath()), "log directory offline") {
		t.Fatal("the open-files limit took the log directory offline")
	}

	// Files freed, the stuck topic comes up without a restart.
	if _, err := adm.DeleteTopics(ctx, "fill-01", "fill-02", "fill-03", "fill-04"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !produceAll(ctx, c.Addrs(), stuck, perTopic, 5*time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up after four topics were deleted (%d open files)", stuck, openFilesOf(t, n.Pid()))
		}
	}
	if !n.Running() {
		t.Fatal("the node exited")
	}
}

// stuckAtLimit tells a topic whose logs did not open from one only slow
// to come up (a loaded machine): it is stuck when /readyz keeps saying a
// partition has no open log and a produce keeps failing, for 15 s.
func stuckAtLimit(ctx context.Context, t *testing.T, n *devcluster.Node, addrs []string, topic string, partitions int32) bool {
	t.Helper()
	for range 3 {
		err := readyz(ctx, n)
		if err == nil || !strings.Contains(err.Error(), "has no open log") {
			if produceAll(ctx, addrs, topic, partitions, 20*time.Second) {
				return false
			}
			t.Fatalf("%s: no produce acknowledged, yet /readyz says %v", topic, err)
		}
		if produceAll(ctx, addrs, topic, partitions, 5*time.Second) {
			return false
		}
	}
	return true
}

// produceAll produces one record to each of the topic's partitions and
// reports whether every one was acknowledged within timeout.
func produceAll(ctx context.Context, addrs []string, topic string, partitions int32, timeout time.Duration) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	recs := make([]*kgo.Record, partitions)
	for p := range recs {
		recs[p] = &kgo.Record{Partition: int32(p), Value: []byte("v")}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr() == nil
}

// processFileLimit is a process's soft open-files limit, from /proc.
func processFileLimit(t *testing.T, pid int) int {
	t.Helper()
	for _, line := range strings.Split(readFile(t, fmt.Sprintf("/proc/%d/limits", pid)), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			n, err := strconv.Atoi(strings.Fields(rest)[0])
			if err != nil {
				t.Fatalf("/proc/%d/limits: %q: %v", pid, line, err)
			}
			return n
		}
	}
	t.Fatalf("no open-files limit in /proc/%d/limits", pid)
	return 0
}

// openFilesOf counts a process's open files.
func openFilesOf(t *testing.T, pid int) int {
	t.Helper()
	names, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readyz is nil when the node's /readyz answers 200, else its answer.
func readyz(ctx context.Context, n *devcluster.Node) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.HTTPAddr()+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
