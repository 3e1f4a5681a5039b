package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// syncBuffer is a log sink the test can read while serve writes.
type syncBuffer struct {
	ch chan string
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.ch <- string(p)
	return len(p), nil
}

// TestServeShutsDownCleanly runs serve with Kafka config names from a
// properties file and flags, produces through it, stops it the way a
// SIGTERM does (its context ends), and checks the log was closed cleanly:
// the next start will not scan it.
func TestServeShutsDownCleanly(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "server.properties")
	os.WriteFile(props, []byte("num.partitions=2\nlog.retention.ms=3600000\n"), 0o644)
	logs := &syncBuffer{ch: make(chan string, 100)}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, props, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"), "samsa.http.listener": "127.0.0.1:0", "samsa.schema.registry.listener": "", "samsa.rest.listener": ""}, false, logger)
	}()
	addr := ""
	re := regexp.MustCompile(`msg="samsa serving".* listeners="PLAINTEXT://([0-9.:]+)`)
	for addr == "" {
		select {
		case line := <-logs.ch:
			if m := re.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not start")
		}
	}
	go func() {
		for range logs.ch {
		}
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	for p := range 2 { // num.partitions from the file
		cp, err := os.ReadFile(filepath.Join(dir, "data", "t-"+string(rune('0'+p)), "log.checkpoint"))
		if err != nil || !bytes.Contains(cp, []byte("clean 1")) || !strings.Contains(string(cp), "next-offset 2") {
			t.Fatalf("partition %d checkpoint after shutdown: %q %v", p, cp, err)
		}
	}
}

// TestServeLogsOneSummaryLine: start-up logs one "samsa serving" line that
// says what an operator needs (version, the advertised listeners, data
// directory, durability) and no line per internal-topic partition.
func TestServeLogsOneSummaryLine(t *testing.T) {
	dir := t.TempDir()
	logs := &syncBuffer{ch: make(chan string, 1000)}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "", map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"), "samsa.http.listener": "127.0.0.1:0", "samsa.schema.registry.listener": "", "samsa.rest.listener": ""}, true, logger)
	}()
	var lines []string
	var summary string
	deadline := time.After(10 * time.Second)
	for summary == "" {
		select {
		case line := <-logs.ch:
			lines = append(lines, line)
			if strings.Contains(line, `msg="samsa serving"`) {
				summary = line
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-deadline:
			t.Fatalf("serve did not start; logged:\n%s", strings.Join(lines, ""))
		}
	}
	cancel()
	for drained := false; !drained; {
		select {
		case line := <-logs.ch:
			lines = append(lines, line)
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			drained = true
		}
	}
	for _, want := range []string{"version=", "listeners=\"PLAINTEXT://127.0.0.1:", "log_dirs=" + filepath.Join(dir, "data"), `durability="durable`, "http=127.0.0.1:"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary line lacks %q:\n%s", want, summary)
		}
	}
	info := 0
	for _, l := range lines {
		if strings.Contains(l, "level=INFO") {
			info++
		}
		if strings.Contains(l, "partition=") && strings.Contains(l, "level=INFO") {
			t.Errorf("a per-partition line at start-up: %s", l)
		}
	}
	if info > 6 {
		t.Errorf("%d INFO lines for a start and stop of an empty broker:\n%s", info, strings.Join(lines, ""))
	}
}
