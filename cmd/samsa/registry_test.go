package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestServeRunsRegistry: with samsa.schema.registry.listener set, serve
// runs the Schema Registry against itself, and stops it on shutdown.
func TestServeRunsRegistry(t *testing.T) {
	dir := t.TempDir()
	logs := dropSink(make(chan string, 1000))
	logger := slog.New(slog.NewTextHandler(logs, nil))
	g := task.NewGroup(context.Background())
	defer g.Stop() // after the cancel below, which ends serve
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	g.Go(func(context.Context) {
		done <- serve(ctx, "", map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"),
			"samsa.http.listener": "", "samsa.schema.registry.listener": "127.0.0.1:0"}, false, logger)
	})
	re := regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
	addr := ""
	for addr == "" {
		select {
		case line := <-logs:
			if m := re.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the registry did not start")
		}
	}
	resp, err := http.Post("http://"+addr+"/subjects/t-value/versions", "application/json", strings.NewReader(`{"schema":"\"string\""}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(got)) != `{"id":1}` {
		t.Fatalf("register: %d %s", resp.StatusCode, got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get("http://" + addr + "/subjects"); err == nil {
		t.Error("the registry still answers after serve returned")
	}
}

// dropSink passes log lines to a channel, dropping them when it is full:
// serve never blocks on a test that stopped reading.
type dropSink chan string

func (d dropSink) Write(p []byte) (int, error) {
	select {
	case d <- string(p):
	default:
	}
	return len(p), nil
}
