package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/freeport"
)

// TestServeRunsMirror: samsa serve with samsa.mirror.config runs the file's
// flow into itself: a topic of another broker arrives as A.<topic>, and the
// mirror's metrics are on serve's /metrics. A file the mirror refuses stops
// the start.
func TestServeRunsMirror(t *testing.T) {
	source, _ := devcluster.StartTestBroker(t)
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	self := fmt.Sprintf("127.0.0.1:%d", port)
	dir := t.TempDir()
	file := filepath.Join(dir, "mm2.properties")
	os.WriteFile(file, []byte(fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
A->B.topics = events
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
emit.heartbeats.enabled = false
`, source, self)), 0o644)

	ctx := context.Background()
	src, err := kgo.NewClient(kgo.SeedBrokers(source), kgo.DefaultProduceTopic("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := kadm.NewClient(src).CreateTopic(ctx, 2, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := src.ProduceSync(ctx, &kgo.Record{Key: []byte{byte(i)}, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	logs := &syncBuffer{ch: make(chan string, 1000)}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- serve(sctx, "", map[string]string{"listeners": "PLAINTEXT://" + self, "log.dirs": filepath.Join(dir, "data"),
			"samsa.http.listener": "127.0.0.1:0", "samsa.schema.registry.listener": "", "samsa.rest.listener": "",
			"samsa.mirror.config": file}, false, logger)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v", err)
		}
	}()
	httpAddr := ""
	re := regexp.MustCompile(`msg="samsa serving".* http=([0-9.:]+)`)
	for httpAddr == "" {
		select {
		case line := <-logs.ch:
			if m := re.FindStringSubmatch(line); m != nil {
				httpAddr = m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not start")
		}
	}
	go func() {
		for range logs.ch {
		}
	}()
	tgt, err := kgo.NewClient(kgo.SeedBrokers(self))
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ends, err := kadm.NewClient(tgt).ListEndOffsets(ctx, "A.events")
		n := int64(0)
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err == nil {
					n += o.Offset
				}
			})
		}
		if n == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A.events holds %d of 50 records (%v)", n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `samsa_mirror_records_total{flow="A->B"} 50`) {
		t.Errorf("serve's /metrics has no mirror count of 50:\n%s", grepLines(string(body), "samsa_mirror"))
	}

	// A file the mirror refuses stops the start.
	bad := filepath.Join(dir, "bad.properties")
	os.WriteFile(bad, []byte("clusters = A\nA.bootstrap.servers = 127.0.0.1:1\nA.no.such.setting = 1\n"), 0o644)
	err = serve(ctx, "", map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data2"),
		"samsa.http.listener": "", "samsa.schema.registry.listener": "", "samsa.rest.listener": "",
		"samsa.mirror.config": bad}, false, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "samsa.mirror.config") {
		t.Errorf("serve with a refused mirror file: %v", err)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
