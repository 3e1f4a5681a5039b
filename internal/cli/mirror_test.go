package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMirrorCommands runs `samsa mirror` (offset preserving) between two
// Samsa brokers, then `samsa mirror status` shows each partition mirrored
// with no lag, `samsa mirror promote` makes the mirror topic writable, and
// status says so. A file MirrorMaker 2 would not accept either is refused
// by name.
func TestMirrorCommands(t *testing.T) {
	a, b := newSamsaBroker(t), newSamsaBroker(t)
	ctx := context.Background()
	src, err := kgo.NewClient(kgo.SeedBrokers(a.addr), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := kadm.NewClient(src).CreateTopic(ctx, 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := src.ProduceSync(ctx, &kgo.Record{Key: []byte{byte(i)}, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "mm2.properties")
	os.WriteFile(file, []byte(fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
A->B.topics = events
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
samsa.offset.preserving.enabled = true
`, a.addr, b.addr)), 0o644)

	// The mirror runs until its context ends.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan result, 1)
	go func() {
		c := &testCluster{t: t, addr: a.addr}
		done <- c.runCtx(runCtx, "", "mirror", "--config", file, "--clusters", "B")
	}()
	run := func(args ...string) result {
		return (&testCluster{t: t, addr: a.addr}).run("", args...)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := run("mirror", "status", "--config", file)
		if r.err == nil && strings.Count(r.stdout, "offset-preserving\n") == 2 && lagsZero(r.stdout) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed both partitions mirrored: %v\n%s", r.err, r.stdout)
		}
		time.Sleep(300 * time.Millisecond)
	}
	r := run("mirror", "promote", "--config", file)
	if r.err != nil || strings.TrimSpace(r.stdout) != "promoted A.events" {
		t.Fatalf("promote: %v\n%s", r.err, r.stdout)
	}
	r = run("mirror", "status", "--config", file)
	if r.err != nil || strings.Count(r.stdout, "promoted") != 2 {
		t.Errorf("status after promote: %v\n%s", r.err, r.stdout)
	}
	stop()
	if res := <-done; res.err != nil {
		t.Errorf("samsa mirror: %v\n%s", res.err, res.stderr)
	}

	bad := filepath.Join(t.TempDir(), "bad.properties")
	os.WriteFile(bad, []byte("clusters = A, B\nA.bootstrap.servers = x:1\nB.bootstrap.servers = y:1\nA->B.enabled = true\ntopics.blacklist = x\n"), 0o644)
	if r := run("mirror", "status", "--config", bad); r.err == nil || !strings.Contains(r.err.Error(), "topics.blacklist") {
		t.Errorf("a refused setting: %v", r.err)
	}
}

// lagsZero: every row of status's table has lag 0.
func lagsZero(table string) bool {
	rows := strings.Split(strings.TrimSpace(table), "\n")[1:]
	for _, r := range rows {
		f := strings.Fields(r)
		if len(f) < 7 || f[6] != "0" {
			return false
		}
	}
	return len(rows) > 0
}
